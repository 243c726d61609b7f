package main

import (
	"context"
	"fmt"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/workflow"
)

// listRuns is workflow.List with the holders a database store knows: a
// run in flight is live when the lease on its workspace is held, by the
// process the run names.
func listRuns(ctx context.Context, g *globals, s store.Store, ws string, all bool) ([]workflow.RunInfo, error) {
	runs, err := workflow.List(ctx, s, g.runDir, ws, all)
	db, ok := s.(*postgres.DB)
	if err != nil || !ok {
		return runs, err
	}
	holders, err := db.Holders(ctx)
	if err != nil {
		return nil, err
	}
	for i := range runs {
		r := &runs[i]
		h, ok := holders[r.Workspace]
		r.Owner, r.Live = workflow.Owner{}, false
		if ok && h.Live && r.Status == store.RunInFlight && r.Holder == fmt.Sprintf("%s pid %d", h.Host, h.PID) {
			r.Owner = workflow.Owner{PID: h.PID, Host: h.Host, Since: h.Since, Heartbeat: h.Heartbeat}
			r.Live = true
		}
	}
	return runs, nil
}

// heartbeat is ", heartbeat 3s ago" for a lease that has one.
func heartbeat(o workflow.Owner) string {
	if o.Heartbeat.IsZero() {
		return ""
	}
	return fmt.Sprintf(", heartbeat %s ago", time.Since(o.Heartbeat).Round(time.Second))
}

// lockWorkspace takes ws for a short write beside the drivers (discard,
// --reset): the run dir's lock, or the workspace's lease in a database.
// A holder is refused with an error wrapping workflow.ErrBusy.
func (g *globals) lockWorkspace(ctx context.Context, ws string) (unlock func(), err error) {
	u, err := g.storeURL()
	if err != nil {
		return nil, err
	}
	if u == "" {
		return workflow.Lock(g.runDir, time.Now())
	}
	db, l, err := flower.LeaseWorkspace(ctx, u, ws)
	if err != nil {
		return nil, err
	}
	return func() { l.Release(); db.Close() }, nil
}

// holder is who holds ws now: the run dir's lock, or the lease in the
// database store s.
func (g *globals) holder(ctx context.Context, s store.Store, ws string) (workflow.Owner, bool) {
	db, ok := s.(*postgres.DB)
	if !ok {
		return workflow.Holder(g.runDir)
	}
	hs, err := db.Holders(ctx)
	if h, ok := hs[ws]; err == nil && ok {
		return workflow.Owner{PID: h.PID, Host: h.Host, Since: h.Since, Heartbeat: h.Heartbeat}, h.Live
	}
	return workflow.Owner{}, false
}

// busyForReset words a refused --reset: the run dir's holder, or the
// lease's refusal as it is (it names the holder).
func busyForReset(g *globals, err error) error {
	if u, _ := g.storeURL(); u != "" {
		return fmt.Errorf("%w: stop it before --reset", err)
	}
	o, _ := workflow.Holder(g.runDir)
	return fmt.Errorf("pid %d is driving %s: stop it before --reset", o.PID, g.runDir)
}
