package script_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/front/script"
)

// run feeds a run of two model responses to an Output of format.
func run(t *testing.T, format string, res agent.Result) string {
	t.Helper()
	var out strings.Builder
	o := script.New(format, &out)
	o.Sink(event.Event{Kind: event.Text, Text: "writing <hello.txt>"})
	o.Sink(event.Event{Kind: event.Usage, Payload: map[string]any{"input": 100, "output": 20, "cache_read": 5}})
	o.Sink(event.Event{Kind: event.Usage, Payload: map[string]any{"input": 50.0, "output": 10.0, "cache_creation": 7.0}}) // as decoded JSON
	o.Done(res)
	return out.String()
}

var ended = agent.Result{SessionID: "s1", OK: true, Stop: agent.StopEnded, Cost: 0.5, Turns: 2, Text: "done",
	Start: time.Unix(100, 0), End: time.Unix(101, 500_000_000)}

// TestJSONIsClaudeCodesResultObject: --output-format json is one object
// with Claude Code's field names, the tokens summed over the run.
func TestJSONIsClaudeCodesResultObject(t *testing.T) {
	var got map[string]any
	if err := json.Unmarshal([]byte(run(t, script.JSON, ended)), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "result", "subtype": "success", "session_id": "s1", "result": "done", "is_error": false,
		"num_turns": 2.0, "total_cost_usd": 0.5, "duration_ms": 1500.0, "stop_reason": "end_turn", "permission_denials": []any{},
		"usage": map[string]any{"input_tokens": 150.0, "output_tokens": 30.0, "cache_read_input_tokens": 5.0, "cache_creation_input_tokens": 7.0}}
	if _, ok := got["duration_api_ms"].(float64); !ok {
		t.Errorf("json: duration_api_ms %v, want a number", got["duration_api_ms"])
	}
	if mu, _ := got["modelUsage"].(map[string]any); len(mu) != 1 {
		t.Errorf("json: modelUsage %v, want one model", got["modelUsage"])
	}
	delete(got, "duration_api_ms")
	delete(got, "modelUsage")
	if g, w := jsonText(got), jsonText(want); g != w {
		t.Errorf("json\n got %s\nwant %s", g, w)
	}
	failed := ended
	failed.OK, failed.Stop, failed.Error = false, agent.StopMaxTurns, "max turns"
	if err := json.Unmarshal([]byte(run(t, script.JSON, failed)), &got); err != nil {
		t.Fatal(err)
	}
	if got["subtype"] != "error_"+string(agent.StopMaxTurns) || got["is_error"] != true || got["error"] != "max turns" {
		t.Errorf("a failed run: %v", got)
	}
}

// TestStreamJSONIsOneEventALineThenTheResult numbers the events as GET
// /events does, and ends with the result object.
func TestStreamJSONIsOneEventALineThenTheResult(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(run(t, script.StreamJSON, ended)), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 3 events and the result:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, l := range lines[:3] {
		var e struct {
			Seq  int    `json:"seq"`
			Kind string `json:"kind"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Seq != i+1 {
			t.Errorf("line %d: %s (%v), want seq %d", i+1, l, err, i+1)
		}
		if i == 0 && (e.Kind != "text" || e.Text != "writing <hello.txt>") {
			t.Errorf("first event %+v", e)
		}
	}
	if !strings.Contains(lines[3], `"type":"result"`) {
		t.Errorf("last line %s, want the result object", lines[3])
	}
}

// TestTextIsTheResultAlone, and Check refuses a format that is none.
func TestTextIsTheResultAlone(t *testing.T) {
	if got := run(t, script.Text, ended); got != "done\n" {
		t.Errorf("text: %q, want the result alone", got)
	}
	if err := script.Check("yaml"); err == nil || !strings.Contains(err.Error(), "use text, json or stream-json") {
		t.Errorf("Check(yaml): %v", err)
	}
	for _, f := range []string{script.Human, script.Text, script.JSON, script.StreamJSON} {
		if err := script.Check(f); err != nil {
			t.Errorf("Check(%q): %v", f, err)
		}
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
