package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
)

// storeCutTask stores what a process killed inside a subagent's Write
// leaves behind: the parent's Task call and the child's Write, both with
// their intent and without a result.
func storeCutTask(t *testing.T, f *fixture) string {
	t.Helper()
	id := "11111111-2222-3333-4444-999999999999"
	storeHistory(t, f, id, userEntry("delegate"),
		callEntry("toolu_task1", "Task", `{"description":"scout","prompt":"write a"}`),
		opEntry(store.KindOpStarted, "toolu_task1", "Task"))
	appendChain(t, f.rt.Store(), store.SessionKey(f.ws, id)+"/task-toolu_task1", userEntry("write a"),
		callEntry("toolu_w", "Write", `{"file_path":"a.txt","content":"A"}`),
		opEntry(store.KindOpStarted, "toolu_w", "Write"))
	return id
}

// TestSubagentCallsTakeTheirStepsPolicy: the policy of a subagent's call
// is its top-level step's (issue 9): discard abandons the whole run, and
// the parent's model never sees it as a failed call.
func TestSubagentCallsTakeTheirStepsPolicy(t *testing.T) { // R5.4, R2.5
	tests := []struct {
		policy  resume.Policy
		written bool
		stop    agent.Stop
	}{
		{resume.Discard, false, agent.StopDiscarded},
		{resume.Skip, false, agent.StopEnded},
		{resume.Retry, true, agent.StopEnded},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			respond := func(r *modeltest.Request) modeltest.Turn {
				if strings.Contains(r.System, "You are a subagent") {
					return modeltest.Turn{Text: "child report"}
				}
				return modeltest.Turn{Text: "parent done"}
			}
			f := newFixture(t, respond)
			// Only the step's Write is named: the parent's Task is retried.
			f.rt = f.runtimeWith(agent.Options{Policies: resume.Policies{Default: resume.Retry,
				PerStepTool: map[string]map[string]resume.Policy{"work": {"Write": tt.policy}}}})
			id := storeCutTask(t, f)
			res := f.run(agent.Spec{Name: "work"}, "", agent.RunOptions{Resume: id})
			if res.Stop != tt.stop {
				t.Fatalf("stop %q, want %q: %+v", res.Stop, tt.stop, res)
			}
			_, err := os.Stat(filepath.Join(f.ws, "a.txt"))
			if written := err == nil; written != tt.written {
				t.Fatalf("a.txt written=%v, want %v", written, tt.written)
			}
			if tt.stop != agent.StopDiscarded {
				if !res.OK || res.Text != "parent done" {
					t.Fatalf("result %+v", res)
				}
				// The retried Task continues its child's session: the
				// task is not sent to the child a second time.
				if child := f.srv.Requests()[0]; len(child.Messages) != 3 {
					t.Fatalf("the child's request has %d messages, want its 3 stored ones", len(child.Messages))
				}
				return
			}
			if !errors.Is(res.Err, agent.ErrDiscarded) || !strings.HasPrefix(res.Error, "discarded") || f.srv.Count() != 0 {
				t.Fatalf("result %+v after %d requests", res, f.srv.Count())
			}
			if got := f.kinds(id); strings.Contains(got, "tool_result") {
				t.Fatalf("the parent recorded the discard as a call result: %s", got)
			}
		})
	}
}
