// Package view turns a session's stored entries into the messages the model
// sees. The store is never changed: everything here is computed on load
// (R4.5). Whatever the entries, the result is a valid API request body:
// roles alternate starting with the user, every tool_use is answered by a
// tool_result in the next message, no result answers a call that was not
// made, and no message or text block is empty.
package view

import (
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// Interrupted is the neutral text that stands for the result of a call that
// never finished (its process died, or the person interrupted it).
const Interrupted = "[no result: this call was interrupted before it finished; check the workspace before repeating it]"

// Options shape the pruned view (R4.5, R4.6).
type Options struct {
	// KeepDenials is how many of the newest denied calls stay in view; the
	// older ones are dropped, call and result. Negative keeps none.
	KeepDenials int
	// Old is the number of leading entries written before this run began:
	// their one-shot command results are marked expired, and with Trim their
	// large results are replaced by a pointer.
	Old  int
	Trim *Trim
	// Settled drops only denials among the first Old entries: a denial
	// made during this run never drops an older one, since that would
	// rewrite the middle of a conversation the provider has cached. The
	// older denials go at the next load (a new run, a wake, a handoff).
	// A Builder's view is settled.
	Settled bool
}

// Default is the view every load gets: keep the newest denial.
var Default = Options{KeepDenials: 1}

// Build returns the model messages of a session's entries, pruned with
// Default.
func Build(entries []store.Entry) []model.Message { return BuildWith(entries, Default) }

// BuildWith returns the model messages of entries, pruned with o.
func BuildWith(entries []store.Entry, o Options) []model.Message {
	msgs, _ := build(entries, o, nil)
	return msgs
}

// build is BuildWith; a non-nil l is told of each entry and what it became.
func build(entries []store.Entry, o Options, l *leftOut) ([]model.Message, []Left) {
	chained, at := chain(entries)
	p := newPruner(chained, at, o)
	var msgs []model.Message
	for i, e := range chained {
		m, ok := p.message(index(at, i), e)
		if l != nil {
			l.see(p, e, m, ok)
		}
		if ok {
			msgs = appendMerged(msgs, m)
		}
	}
	if l == nil {
		return repair(msgs), nil
	}
	return repair(msgs), l.left
}

// index is the index in the session of the i-th chained entry.
func index(at []int, i int) int {
	if at == nil {
		return i
	}
	return at[i]
}

// appendMerged appends m, merging it into the last message when both have
// the same role, since the APIs want roles to alternate.
func appendMerged(msgs []model.Message, m model.Message) []model.Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == m.Role {
		last := &msgs[n-1]
		last.Content = append(append([]model.Block(nil), last.Content...), m.Content...)
		return msgs
	}
	return append(msgs, model.Message{Role: m.Role, Content: append([]model.Block(nil), m.Content...)})
}
