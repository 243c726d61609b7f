package view

import (
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// Builder keeps a session's view between model calls, so that a call
// costs what the session gained since the last one, not its whole length
// (issue 12). Pruning, trimming, expiry and the repairs are decided once
// per entry: the view of a loaded session is built once, then each new
// entry extends it. Its Messages are always what BuildWith would return
// for the same entries with the same Options (Settled set): the property
// test in builder_test.go holds it to that.
//
// The messages before the last one never change once a later message
// exists, and the slices they hold are never written again: a provider
// adapter may keep what it derived from them (model.Memo) and compare
// blocks by pointer to know what is new.
type Builder struct {
	o       Options
	entries []store.Entry // as given: a branch makes Append rebuild from them
	linear  bool          // each entry's parent is the one before it
	p       *pruner
	last    model.Message // the newest merged message: it may still grow
	hasLast bool
	rep     repairer // the repaired messages before last
}

// NewBuilder builds the view of entries with o, settled.
func NewBuilder(entries []store.Entry, o Options) *Builder {
	o.Settled = true
	b := &Builder{o: o}
	b.reset(append([]store.Entry(nil), entries...))
	return b
}

// Len is the number of entries in the view's session.
func (b *Builder) Len() int { return len(b.entries) }

// Options are the options the view was built with.
func (b *Builder) Options() Options { return b.o }

// reset builds the view of entries from nothing.
func (b *Builder) reset(entries []store.Entry) {
	chained, at := chain(entries)
	*b = Builder{o: b.o, entries: entries, linear: at == nil, p: newPruner(chained, at, b.o)}
	for i, e := range chained {
		b.add(index(at, i), e)
	}
}

// Append extends the view with entries appended to the session. An entry
// that does not continue the chain from the newest one (a branch) makes
// the view rebuild, as BuildWith would walk the chain anew.
func (b *Builder) Append(entries ...store.Entry) {
	for k, e := range entries {
		if !b.continues(e) {
			b.reset(append(b.entries, entries[k:]...))
			return
		}
		i := len(b.entries)
		b.entries = append(b.entries, e)
		b.p.see(e)
		b.add(i, e)
	}
}

// continues reports whether e, appended, leaves the chain as it was with
// e at its end: its parent is the newest entry, or (on a linear session)
// it is linear too.
func (b *Builder) continues(e store.Entry) bool {
	n := len(b.entries)
	if n == 0 {
		return true
	}
	if b.linear {
		return e.Parent == b.entries[n-1].UUID
	}
	return e.Parent == b.entries[n-1].UUID && e.Parent != ""
}

// add merges the message of the entry at index i into the view.
func (b *Builder) add(i int, e store.Entry) {
	m, ok := b.p.message(i, e)
	if !ok {
		return
	}
	if b.hasLast && b.last.Role == m.Role {
		b.last.Content = append(append([]model.Block(nil), b.last.Content...), m.Content...)
		return
	}
	if b.hasLast {
		b.rep.feed(b.last)
	}
	b.last, b.hasLast = model.Message{Role: m.Role, Content: append([]model.Block(nil), m.Content...)}, true
}

// Messages is the view: BuildWith of the entries so far. The slice is
// valid until the next Append; a copy of a message in it stays valid, as
// no block or content slice in a view is ever written after it is made.
func (b *Builder) Messages() []model.Message {
	n := len(b.rep.out)
	// Repair the newest message on a copy of the state, starting from the
	// last repaired message, which the newest may merge into.
	t := repairer{open: b.rep.open}
	if n > 0 {
		t.out = []model.Message{b.rep.out[n-1]}
	}
	if b.hasLast {
		t.feed(b.last)
	}
	t.finish()
	if n == 0 {
		return t.out
	}
	if len(t.out[0].Content) != len(b.rep.out[n-1].Content) { // merged: rare
		msgs := make([]model.Message, 0, n-1+len(t.out))
		return append(append(msgs, b.rep.out[:n-1]...), t.out...)
	}
	return append(b.rep.out[:n], t.out[1:]...)
}

// Extends reports whether entries are the view's entries followed by new
// ones (which Append takes), judged by the id of its newest entry.
func (b *Builder) Extends(entries []store.Entry) bool {
	n := len(b.entries)
	return n <= len(entries) && (n == 0 || entries[n-1].UUID == b.entries[n-1].UUID)
}
