package main

import (
	"context"
	"fmt"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/workflow"
)

// leaser is what leases ws's runs, and the name it leases them by: the
// run dir's file lock, or the lease on ws in the database store s.
func (g *globals) leaser(s store.Store, ws string) (store.Leaser, string) {
	if db, ok := s.(*postgres.DB); ok {
		return db, ws
	}
	return sqlite.Dirs{}, g.runDir
}

// listRuns is workflow.List with the holders of the store's leases: a run
// in flight is live when the lease on its workspace is held, by the
// process the run names.
func listRuns(ctx context.Context, g *globals, s store.Store, ws string, all bool) ([]workflow.RunInfo, error) {
	return workflow.List(ctx, s, func(ctx context.Context, ws string) (store.Holder, error) {
		lr, name := g.leaser(s, ws)
		return lr.Holder(ctx, name)
	}, ws, all)
}

// heartbeat is ", heartbeat 3s ago" for a lease that has one.
func heartbeat(h store.Holder) string {
	if h.Heartbeat.IsZero() {
		return ""
	}
	return fmt.Sprintf(", heartbeat %s ago", time.Since(h.Heartbeat).Round(time.Second))
}

// lockWorkspace takes ws for a short write beside the drivers (discard,
// --reset): the run dir's lock, or the workspace's lease in a database.
// A holder is refused with an error wrapping store.ErrBusy.
func (g *globals) lockWorkspace(ctx context.Context, ws string) (unlock func(), err error) {
	u, err := g.storeURL()
	if err != nil {
		return nil, err
	}
	if u == "" {
		l, err := flower.LeaseRunDir(ctx, g.runDir)
		if err != nil {
			return nil, fail(err)
		}
		return l.Release, nil
	}
	db, l, err := flower.LeaseWorkspace(ctx, u, ws)
	if err != nil {
		return nil, fail(err)
	}
	return func() { l.Release(); db.Close() }, nil
}

// holder is who holds ws now: the run dir's lock, or the lease in the
// database store s.
func (g *globals) holder(ctx context.Context, s store.Store, ws string) (store.Holder, bool) {
	lr, name := g.leaser(s, ws)
	h, err := lr.Holder(ctx, name)
	return h, err == nil && h.Live
}

// busyForReset words a refused --reset: the run dir's holder, or the
// lease's refusal as it is (it names the holder).
func busyForReset(ctx context.Context, g *globals, err error) error {
	if u, _ := g.storeURL(); u != "" {
		return fmt.Errorf("%w: stop it before --reset", err)
	}
	h, _ := sqlite.Dirs{}.Holder(ctx, g.runDir)
	return fmt.Errorf("pid %d is driving %s: stop it before --reset", h.PID, g.runDir)
}
