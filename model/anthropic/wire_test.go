package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/model"
)

// TestWireMatchesSDK: the body written from the kept JSON says what the
// SDK's own encoding of the same request says, field for field.
func TestWireMatchesSDK(t *testing.T) {
	msgs := []model.Message{
		{Role: model.User, Content: []model.Block{&model.Text{Text: "fix <b>this</b> & that — ünïcode \u2028"}, &model.Text{Text: ""}}},
		{Role: model.Assistant, Content: []model.Block{
			&model.Thinking{Thinking: "hmm", Signature: "sig"},
			&model.Thinking{Redacted: "opaque"},
			&model.Thinking{Thinking: "from another provider"},
			&model.Text{Text: "looking"},
			&model.ToolUse{ID: "t1", Name: "get_weather", Input: json.RawMessage(`{"city": "Oslo",  "n":[1, 2]}`)},
			&model.ToolUse{ID: "t2", Name: "get_weather"}}},
		{Role: model.User, Content: []model.Block{
			&model.ToolResult{ToolUseID: "t1", Content: "rain\n\t\"quoted\""},
			&model.ToolResult{ToolUseID: "t2", IsError: true}}},
		{Role: model.Assistant, Content: []model.Block{&model.Text{Text: "done"}, &model.Thinking{Thinking: "after", Signature: "s2"}}},
	}
	for _, tc := range []struct {
		name     string
		system   string
		tools    []model.ToolDef
		thinking int
		msgs     []model.Message
	}{
		{"system, tools, thinking", "Be terse.", []model.ToolDef{weatherTool}, 2048, msgs},
		{"no system: tools marked", "", []model.ToolDef{weatherTool, {Name: "bare"}}, 0, msgs},
		{"no tools", "Be terse.", nil, ThinkingAdaptive, msgs[:3]},
		{"one message", "", nil, 0, msgs[:1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(Config{APIKey: "k", ThinkingBudget: tc.thinking})
			req := &model.Request{Model: testModel, System: tc.system, Tools: tc.tools, Messages: tc.msgs}
			_, ours, err := p.params(req)
			if err != nil {
				t.Fatal(err)
			}
			sdkOwn, err := sdkParams(p.head(req), tc.msgs, tc.tools, tc.system == "")
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := json.Marshal(sdkOwn)
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			if err := json.Unmarshal(ours, &a); err != nil {
				t.Fatalf("%v in %s", err, ours)
			}
			if err := json.Unmarshal(theirs, &b); err != nil {
				t.Fatal(err)
			}
			if a.(map[string]any)["stream"] != true {
				t.Fatalf("the body asks for no stream: %s", ours)
			}
			delete(a.(map[string]any), "stream") // NewStreaming sets it
			if d := cmp.Diff(b, a); d != "" {
				t.Fatalf("body differs from the SDK's (-sdk +ours):\n%s", d)
			}
		})
	}
}
