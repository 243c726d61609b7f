package flower

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
)

// OnceInstructions are the system prompt of Once's agent.
const OnceInstructions = `You are flower, an agent that does software and writing tasks in the working directory with the tools you have.
Work step by step: look before you change, make the change, then check it (run it, read it back).
Keep the person informed with short messages. When the task is done, end your turn with a brief summary of what you did and how you checked it.`

// OnceOptions shape one agent run with no workflow.
type OnceOptions struct {
	Resume   string     // continue this session (its full id)
	Fork     bool       // with Resume: branch into a new session
	MaxTurns int        // stop after this many model responses (0: 100)
	Budget   float64    // stop once this many USD are spent (0: no limit)
	Sink     event.Sink // the run's events, secrets scrubbed; nil drops them
	// System, when set, replaces OnceInstructions as the system prompt
	// (Claude Code's --system-prompt); Append is added to it
	// (--append-system-prompt).
	System, Append string
}

// Once runs one agent on prompt in the workspace, with no workflow and no
// lineage; with Resume and no prompt it only finishes what the session
// left undone. Start must have been called.
func (h *Host) Once(ctx context.Context, prompt string, o OnceOptions) agent.Result {
	if h.rt == nil {
		return agent.Result{Error: "flower: Once before Start"}
	}
	if o.MaxTurns == 0 {
		o.MaxTurns = 100
	}
	sink := o.Sink
	if sink == nil {
		sink = func(event.Event) {}
	}
	sink = h.keepingProjectID(sink)
	instr := OnceInstructions
	if o.System != "" {
		instr = o.System
	}
	if o.Append != "" {
		instr += "\n\n" + o.Append
	}
	spec := agent.Spec{Name: "once", Instructions: instr, Model: h.backend.Model, MaxTurns: o.MaxTurns, MaxBudget: o.Budget}
	res := h.rt.Run(ctx, spec, prompt, agent.RunOptions{Resume: o.Resume, Fork: o.Fork, Sink: h.Redact(sink)})
	if fixed := withStorageFix(res.Err, h.runDir); fixed != res.Err {
		res.Err, res.Error = fixed, fixed.Error()
	}
	return res
}

// CheckSession refuses a session id this workspace does not have.
func (h *Host) CheckSession(id string) error {
	if h.rt == nil {
		return errors.New("flower: CheckSession before Start")
	}
	if !h.rt.HasSession(id) {
		return usage("no session %s for workspace %s in %s: check the id printed at the end of the earlier run, and -r / --workspace",
			id, h.ws, filepath.Join(h.runDir, StoreFile))
	}
	return nil
}

// keepingProjectID is sink, which also gives the workspace its project id
// (keepProjectID) at the session's first usage event: that follows the
// commit of its first response, so a run that stored nothing writes no
// id, and one that did is found if its directory moves, as a workflow's
// run is from its first commit (workflow.Options.Stored).
func (h *Host) keepingProjectID(sink event.Sink) event.Sink {
	var once sync.Once
	return func(e event.Event) {
		if e.Kind == event.Usage {
			once.Do(h.keepProjectID)
		}
		sink(e)
	}
}
