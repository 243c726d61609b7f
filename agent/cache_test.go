package agent_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model/modeltest"
)

// cachedPrefix is how many bytes of cur's messages the prompt cache
// written by prev serves: prev's messages up to its breakpoint (its last
// block) when cur starts with them, else 0. cache_control marks are not
// content and are ignored.
func cachedPrefix(t *testing.T, prev, cur []byte) (hit, total int) {
	t.Helper()
	p, c := wireMessages(t, prev), wireMessages(t, cur)
	total = len(mustJSON(t, c))
	if len(p) == 0 || len(c) < len(p) || !reflect.DeepEqual(p[:len(p)-1], c[:len(p)-1]) {
		return 0, total
	}
	last, next := p[len(p)-1], c[len(p)-1]
	lc, nc := last["content"].([]any), next["content"].([]any)
	if last["role"] != next["role"] || len(nc) < len(lc) || !reflect.DeepEqual(lc, nc[:len(lc)]) {
		return 0, total
	}
	return len(mustJSON(t, p)), total
}

func wireMessages(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var req struct{ Messages []map[string]any }
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	for _, m := range req.Messages {
		if blocks, ok := m["content"].([]any); ok {
			for _, b := range blocks {
				delete(b.(map[string]any), "cache_control")
			}
		}
	}
	return req.Messages
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPromptCacheHitsEveryCallOfARun: within a run, each request starts
// with the whole of the one before it, so the prompt cache it wrote serves
// it; a second denial does not drop the first from the middle of the
// conversation (view.Options.Settled). At the next load the older denial
// goes, and that request alone misses (issue 12).
func TestPromptCacheHitsEveryCallOfARun(t *testing.T) {
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Bash", `{"command":"echo one"}`)}},
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Write", `{"file_path":"a","content":"x"}`)}},
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Bash", `{"command":"seq 1 2000"}`)}},
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Write", `{"file_path":"b","content":"y"}`)}},
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Bash", `{"command":"echo two"}`)}},
		modeltest.Turn{Text: "done"},
		modeltest.Turn{Text: "still done"},
	))
	spec := agent.Spec{Tools: []string{"Bash"}} // Write is denied
	first := f.run(spec, "work", agent.RunOptions{})
	if !first.OK || first.Turns != 6 {
		t.Fatalf("run = %+v", first)
	}
	if res := f.run(spec, "and now?", agent.RunOptions{Resume: first.SessionID}); !res.OK {
		t.Fatalf("resume = %+v", res)
	}
	reqs := f.srv.Requests()
	hits, sent := 0, 0
	for i := 1; i < len(reqs); i++ {
		hit, total := cachedPrefix(t, reqs[i-1].Body, reqs[i].Body)
		t.Logf("request %d: %d of %d bytes of messages from the cache", i+1, hit, total)
		if i < 6 && hit == 0 {
			t.Errorf("request %d of the run misses the cache its predecessor wrote", i+1)
		}
		hits, sent = hits+hit, sent+total
	}
	t.Logf("cache-hit bytes: %d of %d (%.0f%%)", hits, sent, 100*float64(hits)/float64(sent))
}
