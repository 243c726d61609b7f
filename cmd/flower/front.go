package main

import (
	"context"
	"io"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/front/term"
)

// frontEnd is a wake's front end (flower.Front) with, for the terminal,
// its own handling of the first Ctrl-C.
type frontEnd struct {
	flower.Front
	// firstCtrlC, when set, handles the first Ctrl-C and reports whether it
	// did; otherwise the run stops at the next message boundary.
	firstCtrlC func(rt *agent.Runtime, w io.Writer) bool
}

// terminal is the default front end: front/term's Terminal.
func terminal(out io.Writer, stdin io.Reader) frontEnd {
	t := term.NewTerminal(out, stdin)
	return frontEnd{Front: flower.Front{Sink: t.Sink,
		Attach: func(ctx context.Context, run flower.WakeRun) (func(), error) {
			return t.Attach(ctx, term.Wake{Channel: run.Channel, Interrupt: run.Runtime.Interrupt, Oracle: run.Oracle.Ask,
				Cost: run.Runtime.TotalCost, Number: run.Number, Workspace: run.Workspace, StartOver: run.StartOver,
				Slash: func(line string) (string, bool) { return terminalSlash(run.Runtime.Workspace(), line) }}), nil
		}},
		firstCtrlC: func(_ *agent.Runtime, w io.Writer) bool { return t.FirstCtrlC(w) },
	}
}
