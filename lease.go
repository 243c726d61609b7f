package flower

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/workflow"
)

// Every refusal of a lease says who holds it, one way whatever the store:
// "run dir in use: flower pid ...", wrapping store.ErrBusy.

// LockWorkspace makes this process the only one working in ws, whatever
// run dir each uses (issue 10): the lock is in ws's default run dir. It
// is the run dir's own lock, taken with the store, when runDir is that
// directory.
func LockWorkspace(ws, runDir string, now time.Time) (unlock func(), err error) {
	dir, err := DefaultRunDir(ws)
	if err != nil {
		return nil, usage("%v", err)
	}
	if SameDir(dir, runDir) {
		return func() {}, nil
	}
	return LockProject(ws, dir, now)
}

// LockProject takes the lock of dir, ws's default run dir.
func LockProject(ws, dir string, now time.Time) (unlock func(), err error) {
	l, err := sqlite.Dirs{Now: func() time.Time { return now }}.Lease(context.Background(), dir)
	if h, ok := BusyHolder(err); ok {
		return nil, fmt.Errorf("run dir %w: flower pid %d on %s has worked in %s since %s: two runs never share a workspace; wait for it to end, or see flower ps",
			store.ErrBusy, h.PID, h.Host, Tilde(ws), h.Since.Local().Format("15:04:05"))
	}
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}

// LeaseRunDir takes the run dir's file lock (store/sqlite, Dirs).
func LeaseRunDir(ctx context.Context, dir string) (store.Lease, error) {
	l, err := sqlite.Dirs{}.Lease(ctx, dir)
	if h, ok := BusyHolder(err); ok {
		return nil, fmt.Errorf("run dir %w: flower pid %d on %s has driven %s since %s: wait for it to end or stop it (flower ps shows it)",
			store.ErrBusy, h.PID, h.Host, dir, h.Since.Local().Format("15:04:05"))
	}
	return l, err
}

// LeaseWorkspace opens the database store at url and takes the lease on
// ws: every write of the lease's Store is fenced by the lease.
func LeaseWorkspace(ctx context.Context, url, ws string) (*postgres.DB, *postgres.Lease, error) {
	db, err := postgres.Open(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	l, err := LeaseIn(ctx, db, ws)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, l, nil
}

// LeaseIn takes the lease on ws in db, an open store; a refusal wraps
// store.ErrBusy and names the holder.
func LeaseIn(ctx context.Context, db *postgres.DB, ws string) (*postgres.Lease, error) {
	l, err := db.Acquire(ctx, ws)
	if h, ok := BusyHolder(err); ok {
		return nil, fmt.Errorf("run dir %w: flower pid %d on %s has driven %s since %s (lease in %s): wait for it to end or stop it (flower ps shows it)",
			store.ErrBusy, h.PID, h.Host, Tilde(h.Name), h.Since.Local().Format("15:04:05"), db)
	}
	return l, err
}

// BusyHolder is the holder that refused a lease, if err is a refusal
// (store.BusyError).
func BusyHolder(err error) (store.Holder, bool) {
	var busy *store.BusyError
	if !errors.As(err, &busy) {
		return store.Holder{}, false
	}
	return busy.Holder, true
}

// drive takes the workspace's store for this process; release gives it
// up. With SQLite it is the run dir's file lock; with PostgreSQL (url, or
// shared, a DB the caller keeps open) the workspace's lease (an advisory
// lock), and every write is fenced by it, so a flower that lost its
// lease cannot write any more (store/postgres, Lease). A second driver
// is refused at once either way, naming the holder. Run state an older
// flower kept in JSON files is imported.
func drive(ctx context.Context, ws, runDir, url string, shared *postgres.DB, notice io.Writer) (s store.Store, release func(), lost <-chan struct{}, err error) {
	switch {
	case shared != nil:
		l, err := LeaseIn(ctx, shared, ws)
		if err != nil {
			return nil, nil, nil, err
		}
		s, release, lost = l.Store(), l.Release, l.Lost()
	case url == "":
		l, err := LeaseRunDir(ctx, runDir)
		if err != nil {
			return nil, nil, nil, err
		}
		db, err := sqlite.Open(filepath.Join(runDir, StoreFile))
		if err != nil {
			l.Release()
			return nil, nil, nil, err
		}
		s, release = db, func() { db.Close(); l.Release() }
	default:
		db, l, err := LeaseWorkspace(ctx, url, ws)
		if err != nil {
			return nil, nil, nil, err
		}
		s, release, lost = l.Store(), func() { l.Release(); db.Close() }, l.Lost()
	}
	if shared == nil {
		if err := adoptMove(ctx, s, runDir, ws); err != nil {
			release()
			return nil, nil, nil, err
		}
	}
	note, err := workflow.Upgrade(ctx, s, runDir, ws)
	if err != nil {
		release()
		return nil, nil, nil, err
	}
	if note != "" {
		noteTo(notice, "note: %s", note)
	}
	return s, release, lost, nil
}
