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
	cut     Cut      // the newest place a later load may join (Cut)
	denied  int      // index of the newest denied result, -1: none
}

// Cut is a place in a session where the view of a later load of it may
// be joined from two parts: the messages of the entries before Entry,
// kept from this view, and the view of the entries from Entry on, built
// alone (agent's snapshot of a wake, issue 12). Entry is an old entry
// beginning an assistant message right after a complete user message:
// no call before it is open, no message merges across it, and the
// results after it answer calls made after it. Msgs is the number of
// this view's messages before it. Denied tells whether a denied result
// lies before it: a later denial would drop that one, so the view of a
// later load would differ before the cut.
type Cut struct {
	Entry, Msgs int
	Denied      bool
}

// NewBuilder builds the view of entries with o, settled. It keeps no
// reference to entries.
func NewBuilder(entries []store.Entry, o Options) *Builder {
	o.Settled = true
	chained, at := chain(entries)
	b := &Builder{o: o, n: len(entries), linear: at == nil, p: newPruner(chained, at, o), denied: -1}
	b.rep.joined = o.Joined
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
	if e.Kind == store.KindResult && e.Op != nil && e.Op.Denied {
		b.denied = i
	}
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
		b.mark(i, m)
	}
	b.last, b.hasLast = model.Message{Role: m.Role, Content: append([]model.Block(nil), m.Content...)}, true
}

// mark records the entry at index i, whose message m begins after the
// repaired messages so far, as the newest cut when it can be one.
func (b *Builder) mark(i int, m model.Message) {
	n := len(b.rep.out)
	if !b.linear || i > b.o.Old || m.Role != model.Assistant || n == 0 ||
		b.rep.out[n-1].Role != model.User || len(b.rep.open) > 0 || len(cleanAssistant(m).Content) == 0 {
		return
	}
	b.cut = Cut{Entry: i, Msgs: n, Denied: b.denied >= 0 && b.denied < i}
}

// Joins reports whether the view of tail, entries from the cut's on
// (tail[0] is the cut's entry, the caller checks its id), built alone
// with Options.Joined, continues the messages before the cut as the view
// of the whole session would: tail is linear, and no denial in it drops
// a call before the cut or of the cut's own message (which could leave
// it empty), or a denial the cut's view kept.
func (c Cut) Joins(tail []store.Entry) bool {
	if len(tail) == 0 || !linear(tail) {
		return false
	}
	calls := map[string]bool{} // the calls a denial may drop
	for i, e := range tail {
		switch {
		case i > 0 && e.Kind == store.KindAssistant && e.Message != nil:
			for _, u := range e.Message.ToolUses() {
				calls[u.ID] = true
			}
		case e.Kind == store.KindResult && e.Op != nil && e.Op.Denied && (c.Denied || !calls[e.Op.ID]):
			return false
		}
	}
	return true
}

// Cut is the newest place where a later load may join this view; ok is
// false when there is none (no old entry qualifies, or the session is
// not linear).
func (b *Builder) Cut() (c Cut, ok bool) { return b.cut, b.cut.Msgs > 0 }

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
	t := repairer{open: b.rep.open, joined: b.rep.joined}
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
