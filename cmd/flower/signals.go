package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/workflow"
)

// interruptible turns the first Ctrl-C into a cooperative interrupt and
// the second into cancelling ctx. SIGTERM and SIGHUP cancel ctx with the
// cause killed-by-signal, so the in-flight step's row says so; main then
// exits as that signal would (R3.7).
// first, when set, may take over the first Ctrl-C (the terminal asks for a
// note).
func interruptible(ctx context.Context, rt *agent.Runtime, w io.Writer, first func(*agent.Runtime, io.Writer) bool) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case s := <-sig:
				n++
				switch {
				case s != os.Interrupt:
					killedBy.Store(s)
					cancel(workflow.ErrKilledBySignal)
				case n == 1 && first != nil && first(rt, w):
				case n == 1:
					fmt.Fprintln(w, "\nflower: stopping after the current tool (a model answer streaming is cut now, its tokens are paid); Ctrl-C again exits at once, cutting the tool")
					rt.Interrupt("")
				default:
					exitNow.Store(true)
					cancel(context.Canceled)
				}
			case <-done:
				return
			}
		}
	}()
	return ctx, func() { signal.Stop(sig); close(done); cancel(nil) }
}

// exitNow is set by a second Ctrl-C: flower serve then exits too, instead
// of staying up for the next wake.
var exitNow atomic.Bool

// killedBy holds the terminating signal that stopped the run, if any.
var killedBy atomic.Value
