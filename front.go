package flower

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/oracle"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
	"github.com/flower-run/flower/wake"
	"github.com/flower-run/flower/workflow"
	"github.com/flower-run/flower/workflow/starter"
)

// Front is where a wake shows its events and takes the person's input:
// the terminal (flower [TASK]), HTTP and the Web page (flower serve), or
// an embedder's own. Everything else about a wake is the same.
type Front struct {
	// Sink receives every event of the run.
	Sink event.Sink
	// Attach starts taking the person's input once the run is set up,
	// just before it starts; its error ends the wake. detach stops that
	// and waits for what it started; it runs when the run is over.
	Attach func(ctx context.Context, r WakeRun) (detach func(), err error)
}

// WakeRun is what a front end steers.
type WakeRun struct {
	Channel   *human.Channel
	Runtime   *agent.Runtime
	Oracle    *oracle.Oracle
	Banner    string      // the wake's first line (R3.12)
	Number    int         // this wake's number
	Workspace string      // the workspace, as shown
	Store     store.Store // the wake's store: flower serve keeps its events there
	// StartOver stops the run at the next message boundary and archives
	// the thread once it has stopped (/new at the prompt, R3.13).
	StartOver func()
}

// WakeOptions shape a wake of flower's starter flow (Host.Wake).
type WakeOptions struct {
	Front Front
	Human HumanOptions
	Drive DriveOptions
	// Out receives the banner and the wake's notes for the person.
	Out io.Writer
	// Guard, when set, wraps the context the run is driven with from the
	// moment the runtime exists (the CLI's signal handling: Ctrl-C
	// interrupts the runtime); stop is called when the run is over.
	Guard func(ctx context.Context, rt *agent.Runtime) (_ context.Context, stop func())
	// Ended, when set, is told how the run ended while the front end is
	// still attached (the CLI says its last line there); Wake returns its
	// error.
	Ended func(Woke) error
}

// Woke is how a wake ended.
type Woke struct {
	Outcome  workflow.Outcome
	Archived bool    // StartOver: the run stopped and the thread was archived
	Stopped  bool    // the guarded context ended (Ctrl-C twice, a signal)
	Cost     float64 // what the runtime spent, in USD
}

// Wake starts the runtime for plan (from Prepare; a Pass plan needs no
// wake) and drives it with flower's starter flow, steered by o.Front:
// the banner on o.Out, the front end attached, the run driven, and the
// thread archived after StartOver. An error is one of starting, of
// attaching the front end, of archiving, or Ended's; how the run ended
// is in Woke.
func (h *Host) Wake(ctx context.Context, plan wake.Plan, o WakeOptions) (Woke, error) {
	hu := o.Human
	err := h.Start(ctx, StartOptions{Sink: o.Front.Sink, Tools: []tool.Tool{workflow.VerdictTool{}}, Human: &hu})
	if err != nil {
		return Woke{}, err
	}
	rt, st, ws := h.Runtime(), plan.State, h.Workspace()
	line := Banner(ctx, h.store, ws, st, plan.Cut) + "  · " + h.Backend().Describe() + InstructionsNote(ws)
	fmt.Fprintln(o.Out, line)
	if !st.Waking && strings.TrimSpace(st.Brief) != "" {
		fmt.Fprintf(o.Out, "note: ignored %s: it lacks its four sections (%s)\n", starter.BriefPath, strings.Join(starter.BriefSections, ", "))
	}
	if o.Guard != nil {
		var stop func()
		ctx, stop = o.Guard(ctx, rt)
		defer stop()
	}
	var startOver atomic.Bool
	restart := func() {
		startOver.Store(true)
		fmt.Fprintln(o.Out, "flower: /new: stopping at the next message boundary, then archiving this thread")
		rt.Interrupt("")
	}
	detach, err := o.Front.Attach(ctx, WakeRun{Channel: h.Channel(), Runtime: rt, Oracle: h.Oracle(), Banner: line,
		Number: st.Woke + 1, Workspace: Tilde(ws), Store: h.store, StartOver: restart})
	if err != nil {
		return Woke{}, err
	}
	defer detach()
	w := Woke{Outcome: h.Drive(ctx, plan, o.Drive)}
	if startOver.Load() {
		if err := h.Archive(ctx); err != nil {
			return Woke{}, err
		}
		fmt.Fprintf(o.Out, "archived this thread under %s: start the next one with flower \"task\"\n", filepath.Join(Tilde(ws), starter.ArchiveDir))
		w.Archived = true
	}
	w.Stopped, w.Cost = ctx.Err() != nil, rt.TotalCost()
	if o.Ended != nil {
		return w, o.Ended(w)
	}
	return w, nil
}
