package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/sqlite"
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
		l, err := leaseRunDir(ctx, g.runDir)
		if err != nil {
			return nil, nil, err
		}
		s, err := openRunDir(ctx, g, ws, out)
		if err != nil {
			l.Release()
			return nil, nil, err
		}
		return s, func() { s.Close(); l.Release() }, nil
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

// leaseRunDir takes the run dir's file lock (store/sqlite, Dirs).
func leaseRunDir(ctx context.Context, dir string) (store.Lease, error) {
	l, err := sqlite.Dirs{}.Lease(ctx, dir)
	if h, ok := busyHolder(err); ok {
		err = fmt.Errorf("run dir %w: flower pid %d on %s has driven %s since %s: wait for it to end or stop it (flower ps shows it)",
			store.ErrBusy, h.PID, h.Host, dir, h.Since.Local().Format("15:04:05"))
	}
	if err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	return l, nil
}

// leaseWorkspace opens the database store and takes the lease on ws.
func leaseWorkspace(ctx context.Context, url, ws string) (*postgres.DB, *postgres.Lease, error) {
	db, err := postgres.Open(ctx, url)
	if err != nil {
		return nil, nil, &exitError{code: exitFailed, err: err}
	}
	l, err := db.Acquire(ctx, ws)
	if h, ok := busyHolder(err); ok {
		err = fmt.Errorf("run dir %w: flower pid %d on %s has driven %s since %s (lease in %s): wait for it to end or stop it (flower ps shows it)",
			store.ErrBusy, h.PID, h.Host, tilde(h.Name), h.Since.Local().Format("15:04:05"), db)
	}
	if err != nil {
		db.Close()
		return nil, nil, &exitError{code: exitFailed, err: err}
	}
	return db, l, nil
}

// busyHolder is the holder that refused a lease, if err is a refusal
// (store.BusyError). The refusals are worded here, one way whatever the
// store, as "run dir in use: flower pid ...".
func busyHolder(err error) (store.Holder, bool) {
	var busy *store.BusyError
	if !errors.As(err, &busy) {
		return store.Holder{}, false
	}
	return busy.Holder, true
}

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
		l, err := leaseRunDir(ctx, g.runDir)
		if err != nil {
			return nil, err
		}
		return l.Release, nil
	}
	db, l, err := leaseWorkspace(ctx, u, ws)
	if err != nil {
		return nil, err
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
