package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/front/web"
)

// steered makes fe, the front end of a wake on a database store, also
// steerable from any flower serve --runs attached to that database
// (web.Steering); storeEvents keeps the wake's events in the store, as
// flower serve keeps its own. On SQLite nothing else can reach the run:
// fe is returned as it is.
func steered(g *globals, fe frontEnd, storeEvents bool) frontEnd {
	if u, err := g.storeURL(); err != nil || u == "" {
		return fe
	}
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return fe
	}
	st := web.NewSteering(ws, storeEvents, os.Stderr)
	inner, attach := fe.Sink, fe.Attach
	fe.Sink = func(e event.Event) { inner(e); st.Publish(e) }
	fe.Attach = func(ctx context.Context, run flower.WakeRun) (func(), error) {
		stop := st.Attach(ctx, run.Channel, run.Runtime.Interrupt, run.Store)
		detach, err := attach(ctx, run)
		if err != nil {
			stop()
			return nil, err
		}
		return func() { detach(); stop() }, nil
	}
	return fe
}
