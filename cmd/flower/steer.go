package main

import (
	"os"
	"path/filepath"

	"github.com/flower-run/flower/front/web"
)

// steered makes fe, the front end of a wake on a database store, also
// steerable from any flower serve --runs attached to that database
// (web.Steering.Wrap); storeEvents keeps the wake's events in the store, as
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
	fe.Front = web.NewSteering(ws, storeEvents, os.Stderr).Wrap(fe.Front)
	return fe
}
