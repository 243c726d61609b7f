package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
)

// cancelTool ends the run's context with a cause, as a signal handler does.
type cancelTool struct{ cancel context.CancelCauseFunc }

func (*cancelTool) Name() string            { return "Cancel" }
func (*cancelTool) Description() string     { return "cancels" }
func (*cancelTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (*cancelTool) Class() tool.Class       { return tool.Pure }
func (c *cancelTool) Run(context.Context, json.RawMessage) (tool.Result, error) {
	c.cancel(errKilled)
	return tool.Result{Content: "ok"}, nil
}

var errKilled = errors.New("killed-by-signal")

func loopGlob(*modeltest.Request) modeltest.Turn {
	return modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Glob", `{"pattern":"*"}`)},
		Usage: &model.Usage{Input: 100_000, Output: 1000}}
}

// TestStopOfEveryExit: every way a Run ends sets Stop and an Err that
// workflows can test with errors.Is, never by error text (issue 9).
func TestStopOfEveryExit(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T) agent.Result
		stop agent.Stop
		err  error // nil: no error
	}{
		{"ended", func(t *testing.T) agent.Result {
			f := newFixture(t, modeltest.Script(modeltest.Turn{Text: "done"}))
			return f.run(agent.Spec{}, "go", agent.RunOptions{})
		}, agent.StopEnded, nil},
		{"max turns", func(t *testing.T) agent.Result {
			f := newFixture(t, loopGlob)
			return f.run(agent.Spec{MaxTurns: 2}, "go", agent.RunOptions{})
		}, agent.StopMaxTurns, agent.ErrMaxTurns},
		{"budget", func(t *testing.T) agent.Result {
			f := newFixture(t, loopGlob)
			return f.run(agent.Spec{MaxBudget: 0.5}, "go", agent.RunOptions{})
		}, agent.StopBudget, agent.ErrBudget},
		{"interrupted", func(t *testing.T) agent.Result {
			b := &blockTool{}
			f := newFixture(t, modeltest.Script(modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Block", `{}`)}}), b)
			b.rt = func() *agent.Runtime { return f.rt }
			return f.run(agent.Spec{}, "go", agent.RunOptions{})
		}, agent.StopInterrupted, nil},
		{"cancelled with a cause", func(t *testing.T) agent.Result {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			f := newFixture(t, modeltest.Script(modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Cancel", `{}`)}},
				modeltest.Turn{Text: "never"}), &cancelTool{cancel: cancel})
			return f.rt.Run(ctx, agent.Spec{Model: "claude-sonnet-4-6"}, "go", agent.RunOptions{})
		}, agent.StopCancelled, errKilled},
		{"discarded", func(t *testing.T) agent.Result {
			f := newFixture(t, modeltest.Script())
			f.rt = f.runtimeWith(agent.Options{Policies: resume.Policies{Default: resume.Discard}})
			return f.run(agent.Spec{Name: "work"}, "", agent.RunOptions{Resume: storeCut(t, f)})
		}, agent.StopDiscarded, agent.ErrDiscarded},
		{"discarded in a subagent", func(t *testing.T) agent.Result {
			f := newFixture(t, modeltest.Script())
			f.rt = f.runtimeWith(agent.Options{Policies: resume.Policies{
				PerStepTool: map[string]map[string]resume.Policy{"work": {"Write": resume.Discard}}}})
			return f.run(agent.Spec{Name: "work"}, "", agent.RunOptions{Resume: storeCutTask(t, f)})
		}, agent.StopDiscarded, agent.ErrDiscarded},
		{"failed", func(t *testing.T) agent.Result {
			f := newFixture(t, modeltest.Script(modeltest.Turn{Fault: &modeltest.Fault{Status: 401, Message: "invalid x-api-key"}}))
			return f.run(agent.Spec{}, "go", agent.RunOptions{})
		}, agent.StopFailed, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := tt.run(t)
			if res.Stop != tt.stop || res.OK != (tt.stop == agent.StopEnded) {
				t.Fatalf("stop %q ok %v, want %q: %+v", res.Stop, res.OK, tt.stop, res)
			}
			if (res.Err == nil) != (tt.stop == agent.StopEnded) || (res.Err != nil && res.Error != res.Err.Error()) {
				t.Fatalf("err %v, error %q", res.Err, res.Error)
			}
			if tt.err != nil && !errors.Is(res.Err, tt.err) {
				t.Fatalf("err %v, want one wrapping %v", res.Err, tt.err)
			}
		})
	}
}

// TestSubagentGetsNoBudgetWhenItIsSpent: a child's MaxBudget of 0 or less
// would mean no limit; a Task started with the budget spent does not run.
func TestSubagentGetsNoBudgetWhenItIsSpent(t *testing.T) {
	respond := func(r *modeltest.Request) modeltest.Turn {
		if len(r.Messages) == 1 {
			return modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Task", `{"description":"x","prompt":"work"}`)},
				Usage: &model.Usage{Input: 200_000, Output: 1000}}
		}
		return modeltest.Turn{Text: "child ran"}
	}
	f := newFixture(t, respond)
	res := f.run(agent.Spec{MaxBudget: 0.1}, "go", agent.RunOptions{})
	if res.Stop != agent.StopBudget || f.srv.Count() != 1 {
		t.Fatalf("result %+v after %d requests", res, f.srv.Count())
	}
}

// TestInterruptDoesNotHideAFailedWrite: a write that fails while an
// interrupt arrives fails the run; the interrupt does not paper over it.
func TestInterruptDoesNotHideAFailedWrite(t *testing.T) {
	f := newFixture(t, modeltest.Script(modeltest.Turn{Text: "lost"}, modeltest.Turn{Text: "again"}))
	fs := withFaultStore(f, agent.Options{})
	var once sync.Once
	fs.setFail(func(b store.Batch) error {
		var err error
		if len(b.Entries) > 0 && b.Entries[0].Kind == store.KindAssistant {
			once.Do(func() {
				f.rt.Interrupt("and now this")
				err = errDiskFull
			})
		}
		return err
	})
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if res.Stop != agent.StopFailed || !errors.Is(res.Err, errDiskFull) || f.srv.Count() != 1 {
		t.Fatalf("result %+v after %d requests", res, f.srv.Count())
	}
}
