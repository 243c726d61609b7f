package modeltest

import (
	"encoding/json"
	"fmt"

	"github.com/flower-run/flower/model"
)

// MemoSteps are the message lists of successive calls of one conversation
// for the providers' model.Memo tests: it grows by a tool round per call,
// then its middle is rewritten, then it is shortened and grown back. A
// memo must make every call's body byte for byte the body of a
// conversion from nothing.
func MemoSteps() [][]model.Message {
	var msgs []model.Message
	var steps [][]model.Message
	for i := range 6 {
		id := fmt.Sprintf("t%d", i)
		msgs = append(msgs, model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: fmt.Sprintf("q%d", i)}}},
			model.Message{Role: model.Assistant, Content: []model.Block{&model.Text{Text: "let me see"},
				&model.ToolUse{ID: id, Name: "get_weather", Input: json.RawMessage(`{"city":"Oslo"}`)}}},
			model.Message{Role: model.User, Content: []model.Block{&model.ToolResult{ToolUseID: id, Content: "rain"}}})
		steps = append(steps, append([]model.Message(nil), msgs...))
	}
	rewritten := append([]model.Message(nil), msgs...)
	rewritten[4] = model.Message{Role: model.Assistant, Content: []model.Block{&model.Text{Text: "changed"},
		&model.ToolUse{ID: "t1", Name: "get_weather", Input: json.RawMessage(`{"city":"Bergen"}`)}}}
	return append(steps, rewritten, rewritten[:5], rewritten)
}
