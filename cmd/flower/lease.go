package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/workflow"
)

// drive takes the workspace for this process and opens the store it
// writes through; release gives both up. With SQLite it is the run dir's
// file lock; with PostgreSQL the workspace's lease (an advisory lock), and
// every write goes through the lease's connection, so a flower that lost
// its lease cannot write any more (store/postgres, Lease). A second driver
// is refused at once either way, naming the holder.
func (g *globals) drive(ctx context.Context, ws string, out io.Writer) (s store.Store, release func(), err error) {
	u, err := g.storeURL()
	if err != nil {
		return nil, nil, err
	}
	if u == "" {
		unlock, err := workflow.Lock(g.runDir, time.Now())
		if err != nil {
			return nil, nil, &exitError{code: exitFailed, err: err}
		}
		s, err := openRunDir(ctx, g, ws, out)
		if err != nil {
			unlock()
			return nil, nil, err
		}
		return s, func() { s.Close(); unlock() }, nil
	}
	db, l, err := leaseWorkspace(ctx, u, ws)
	if err != nil {
		return nil, nil, err
	}
	release = func() { l.Release(); db.Close() }
	s = l.Store()
	note, err := workflow.Upgrade(ctx, s, g.runDir, ws)
	if err != nil {
		release()
		return nil, nil, &exitError{code: exitFailed, err: err}
	}
	if note != "" {
		fmt.Fprintln(out, "note: "+note)
	}
	return s, release, nil
}

// leaseWorkspace opens the database store and takes the lease on ws.
func leaseWorkspace(ctx context.Context, url, ws string) (*postgres.DB, *postgres.Lease, error) {
	db, err := postgres.Open(ctx, url)
	if err != nil {
		return nil, nil, &exitError{code: exitFailed, err: err}
	}
	l, err := db.Lease(ctx, ws)
	if err != nil {
		db.Close()
		return nil, nil, &exitError{code: exitFailed, err: leaseErr(err, db)}
	}
	return db, l, nil
}

// leaseErr words a refused lease as the run dir's lock words it
// (workflow.ErrBusy), naming the holder and the database.
func leaseErr(err error, db *postgres.DB) error {
	var busy *postgres.BusyError
	if !errors.As(err, &busy) {
		return err
	}
	h := busy.Holder
	return fmt.Errorf("%w: flower pid %d on %s has driven %s since %s (lease in %s): wait for it to end or stop it (flower ps shows it)",
		workflow.ErrBusy, h.PID, h.Host, tilde(h.Name), h.Since.Local().Format("15:04:05"), db)
}

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
	db, l, err := leaseWorkspace(ctx, u, ws)
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
