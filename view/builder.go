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
	n       int    // entries in the view's session
	leaf    string // uuid of the newest
	linear  bool   // each entry's parent is the one before it
	p       *pruner
	last    model.Message // the newest merged message: it may still grow
	hasLast bool
	rep     repairer // the repaired messages before last
}

// NewBuilder builds the view of entries with o, settled. It keeps no
// reference to entries.
func NewBuilder(entries []store.Entry, o Options) *Builder {
	o.Settled = true
	chained, at := chain(entries)
	b := &Builder{o: o, n: len(entries), linear: at == nil, p: newPruner(chained, at, o)}
	if len(entries) > 0 {
		b.leaf = entries[len(entries)-1].UUID
	}
	for i, e := range chained {
		b.add(index(at, i), e)
	}
	return b
}

// Len is the number of entries in the view's session.
func (b *Builder) Len() int { return b.n }

// Options are the options the view was built with.
func (b *Builder) Options() Options { return b.o }

// Append extends the view with entries appended to the session, and
// reports false, taking none of them, when one does not continue the chain
// from the newest entry (a branch): the view must then be built anew from
// the whole session, as BuildWith would walk the chain anew.
func (b *Builder) Append(entries ...store.Entry) bool {
	leaf := b.leaf
	for i, e := range entries {
		if b.n+i > 0 && (e.Parent != leaf || !b.linear && leaf == "") {
			return false
		}
		leaf = e.UUID
	}
	for _, e := range entries {
		b.p.see(e)
		b.add(b.n, e)
		b.n++
		b.leaf = e.UUID
	}
	return true
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

// Messages is the view: BuildWith of the entries so far followed by
// extra, entries not yet in the session that continue its chain (results
// that will commit with the next response: agent's group commit). extra
// are results or user entries: their calls are not recorded. The slice is
// valid until the next Append; a copy of a message in it stays valid, as no
// block or content slice in a view is ever written after it is made.
func (b *Builder) Messages(extra ...store.Entry) []model.Message {
	n := len(b.rep.out)
	// Repair the newest messages on a copy of the state, starting from the
	// last repaired message, which the newest may merge into.
	t := repairer{open: b.rep.open}
	if n > 0 {
		t.out = []model.Message{b.rep.out[n-1]}
	}
	last, hasLast := b.last, b.hasLast
	for k, e := range extra {
		m, ok := b.p.message(b.n+k, e)
		switch {
		case !ok:
		case hasLast && last.Role == m.Role:
			last.Content = append(append([]model.Block(nil), last.Content...), m.Content...)
		default:
			if hasLast {
				t.feed(last)
			}
			last, hasLast = m, true
		}
	}
	if hasLast {
		t.feed(last)
	}
	t.finish()
	if n == 0 {
		return t.out
	}
	if len(t.out[0].Content) != len(b.rep.out[n-1].Content) { // merged: rare
		msgs := make([]model.Message, 0, n-1+len(t.out))
		return append(append(msgs, b.rep.out[:n-1]...), t.out...)
	}
	msgs := append(b.rep.out[:n], t.out[1:]...)
	b.rep.out = msgs[:n] // keep the room the next call appends in
	return msgs
}

// Extends reports whether entries are the view's entries followed by new
// ones (which Append takes), judged by the id of its newest entry.
func (b *Builder) Extends(entries []store.Entry) bool {
	return b.n <= len(entries) && (b.n == 0 || entries[b.n-1].UUID == b.leaf)
}
