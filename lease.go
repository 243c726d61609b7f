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

// LockProject takes the lock of dir, ws's default run dir, refusing in
// one line that names the holder.
func LockProject(ws, dir string, now time.Time) (unlock func(), err error) {
	unlock, err = workflow.Lock(dir, now)
	if errors.Is(err, workflow.ErrBusy) {
		o, _ := workflow.Holder(dir)
		return nil, fmt.Errorf("%w: flower pid %d on %s has worked in %s since %s: two runs never share a workspace; wait for it to end, or see flower ps",
			workflow.ErrBusy, o.PID, o.Host, Tilde(ws), o.Since.Format("15:04:05"))
	}
	return unlock, err
}

// drive takes the workspace's store for this process; release gives it
// up. With SQLite it is the run dir's file lock; with PostgreSQL the
// workspace's lease (an advisory lock), and every write goes through the
// lease's connection, so a flower that lost its lease cannot write any
// more (store/postgres, Lease). A second driver is refused at once either
// way, naming the holder.
func drive(ctx context.Context, ws, runDir, url string, notice io.Writer) (s store.Store, release func(), err error) {
	if url == "" {
		unlock, err := workflow.Lock(runDir, time.Now())
		if err != nil {
			return nil, nil, err
		}
		db, err := sqlite.Open(filepath.Join(runDir, StoreFile))
		if err != nil {
			unlock()
			return nil, nil, err
		}
		s, release = db, func() { db.Close(); unlock() }
	} else {
		db, l, err := LeaseWorkspace(ctx, url, ws)
		if err != nil {
			return nil, nil, err
		}
		s, release = l.Store(), func() { l.Release(); db.Close() }
	}
	note, err := workflow.Upgrade(ctx, s, runDir, ws)
	if err != nil {
		release()
		return nil, nil, err
	}
	if note != "" {
		noteTo(notice, "note: %s", note)
	}
	return s, release, nil
}

// LeaseWorkspace opens the database store at url and takes the lease on
// ws. A held lease is refused with an error wrapping workflow.ErrBusy
// that names the holder and the database.
func LeaseWorkspace(ctx context.Context, url, ws string) (*postgres.DB, *postgres.Lease, error) {
	db, err := postgres.Open(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	l, err := db.Lease(ctx, ws)
	if err != nil {
		db.Close()
		return nil, nil, leaseErr(err, db)
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
		workflow.ErrBusy, h.PID, h.Host, Tilde(h.Name), h.Since.Local().Format("15:04:05"), db)
}
