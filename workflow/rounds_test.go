package workflow

import (
	"context"
	"strings"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model/modeltest"
)

// A judge that never passes, with NoRework: one verdict, no findings sent
// back to work (issue 11: --rounds 0 means zero extra rounds, not 3).
func TestNoReworkJudgesOnce(t *testing.T) {
	f := newFlowFixture(t, nil)
	play := flowModel(nil)
	fail := func(r *modeltest.Request) modeltest.Turn {
		if stepNamed(r.System) == "judge" && toolResultsAfterPrompt(r.Messages) == 0 {
			return modeltest.Turn{ToolCalls: []modeltest.ToolCall{{Name: VerdictName, Input: `{"pass":false,"findings":"missing x"}`}}}
		}
		return play(r)
	}
	f.srv = modeltest.NewAnthropic(fail)
	t.Cleanup(f.srv.Close)
	w := New(testStep("a"))
	w.Judge = testJudge("a")
	w.Judge.Rounds = NoRework
	var names []string
	w.OnStep = func(step string, _ agent.Result) { names = append(names, step) }
	out := w.Run(context.Background(), f.runtime(), Options{RunDir: f.runDir})
	if out.Passed || out.Err != nil || out.Verdict != "missing x" {
		t.Fatalf("outcome %+v", out)
	}
	if got := strings.Join(names, " "); got != "a a·judge#1" {
		t.Fatalf("steps %q, want one judge round and no rework", got)
	}
}
