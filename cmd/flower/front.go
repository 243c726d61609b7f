package main

import (
	"context"
	"io"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/front/term"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/oracle"
	"github.com/flower-run/flower/store"
)

// frontEnd is where a wake shows its events and takes the person's input:
// the terminal (flower [TASK]) or HTTP and the Web page (flower serve).
// Everything else about a wake is the same.
type frontEnd struct {
	// sink receives every event of the run.
	sink event.Sink
	// attach starts taking the person's input once the run is set up,
	// just before it starts; its error, an *exitError, ends the wake.
	// detach stops that and waits for what it started; it runs when the
	// run is over.
	attach func(ctx context.Context, r wakeRun) (detach func(), err error)
	// firstCtrlC, when set, handles the first Ctrl-C and reports whether it
	// did; otherwise the run stops at the next message boundary.
	firstCtrlC func(rt *agent.Runtime, w io.Writer) bool
}

// wakeRun is what a front end steers.
type wakeRun struct {
	ch     *human.Channel
	rt     *agent.Runtime
	oracle *oracle.Oracle
	banner string      // the wake's first line (R3.12)
	wake   int         // this wake's number
	ws     string      // the workspace, as shown
	store  store.Store // the wake's store: flower serve keeps its events there
	// startOver stops the run at the next message boundary and archives the
	// thread once it has stopped (/new at the prompt, R3.13).
	startOver func()
}

// terminal is the default front end: front/term's Terminal.
func terminal(out io.Writer, stdin io.Reader) frontEnd {
	t := term.NewTerminal(out, stdin)
	return frontEnd{sink: t.Sink,
		attach: func(ctx context.Context, run wakeRun) (func(), error) {
			return t.Attach(ctx, term.Wake{Channel: run.ch, Interrupt: run.rt.Interrupt, Oracle: run.oracle.Ask,
				Cost: run.rt.TotalCost, Number: run.wake, Workspace: run.ws, StartOver: run.startOver,
				Slash: func(line string) (string, bool) { return terminalSlash(run.rt.Workspace(), line) }}), nil
		},
		firstCtrlC: func(_ *agent.Runtime, w io.Writer) bool { return t.FirstCtrlC(w) },
	}
}
