package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
)

// TestMemoSendsWhatAFreshConversionSends grows a conversation over calls
// with a Memo, rewrites its middle once and shortens it once, and wants
// every request body byte for byte equal to the one a conversion from
// nothing sends, with the cache breakpoint only on the last block.
func TestMemoSendsWhatAFreshConversionSends(t *testing.T) {
	srv := modeltest.NewAnthropic(func(*modeltest.Request) modeltest.Turn { return modeltest.Turn{Text: "ok"} })
	defer srv.Close()
	p := newProvider(srv)
	memo := &model.Memo{}
	var msgs []model.Message
	steps := [][]model.Message{}
	for i := range 6 {
		id := fmt.Sprintf("t%d", i)
		msgs = append(msgs, userText(fmt.Sprintf("q%d", i)),
			model.Message{Role: model.Assistant, Content: []model.Block{&model.Text{Text: "let me see"},
				&model.ToolUse{ID: id, Name: "get_weather", Input: json.RawMessage(`{"city":"Oslo"}`)}}},
			model.Message{Role: model.User, Content: []model.Block{&model.ToolResult{ToolUseID: id, Content: "rain"}}})
		steps = append(steps, append([]model.Message(nil), msgs...))
	}
	rewritten := append([]model.Message(nil), msgs...)
	rewritten[4] = model.Message{Role: model.Assistant, Content: []model.Block{&model.Text{Text: "changed"},
		&model.ToolUse{ID: "t1", Name: "get_weather", Input: json.RawMessage(`{"city":"Bergen"}`)}}}
	steps = append(steps, rewritten, rewritten[:5], rewritten)
	for i, m := range steps {
		for _, memo := range []*model.Memo{memo, nil} {
			req := &model.Request{Model: testModel, System: "Be terse.", Tools: []model.ToolDef{weatherTool}, Messages: m, Memo: memo}
			if _, err := p.Stream(t.Context(), req, nil); err != nil {
				t.Fatal(err)
			}
		}
		reqs := srv.Requests()
		with, without := reqs[len(reqs)-2], reqs[len(reqs)-1]
		if !bytes.Equal(with.Body, without.Body) {
			t.Fatalf("step %d: with a memo\n%s\nwithout\n%s", i, with.Body, without.Body)
		}
		body, _ := decodeBody(t, with)
		checkCacheMarks(t, body, true, false)
	}
}
