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

// Build returns the model messages of a session's entries.
func Build(entries []store.Entry) []model.Message {
	var msgs []model.Message
	for _, e := range entries {
		if m, ok := messageOf(e); ok {
			msgs = appendMerged(msgs, m)
		}
	}
	return repair(msgs)
}

// messageOf is the message an entry contributes, if any.
func messageOf(e store.Entry) (model.Message, bool) {
	switch e.Kind {
	case store.KindUser, store.KindAssistant:
		if e.Message == nil {
			return model.Message{}, false
		}
		return *e.Message, true
	case store.KindResult:
		if e.Op == nil {
			return model.Message{}, false
		}
		return model.Message{Role: model.User, Content: []model.Block{
			&model.ToolResult{ToolUseID: e.Op.ID, Content: e.Op.Content, IsError: e.Op.IsError}}}, true
	case store.KindNote:
		return model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: e.Text}}}, true
	}
	// op_started, api_error, interrupt, handoff: bookkeeping the model never sees.
	return model.Message{}, false
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
