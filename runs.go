package flower

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/workflow"
)

// What a person does to runs beside their drivers: list them with who
// drives them, discard one, reset a workspace.

// leaser is what leases ws's runs, and the name it leases them by: the
// run dir's file lock, or the lease on ws in the database store s.
func leaser(s store.Store, runDir, ws string) (store.Leaser, string) {
	if db, ok := s.(*postgres.DB); ok {
		return db, ws
	}
	return sqlite.Dirs{}, runDir
}

// Runs lists the runs of ws in s (all: finished and discarded ones too)
// with who drives them: a run in flight is live when the lease on its
// workspace is held, by the process the run names.
func Runs(ctx context.Context, s store.Store, runDir, ws string, all bool) ([]workflow.RunInfo, error) {
	return workflow.List(ctx, s, func(ctx context.Context, ws string) (store.Holder, error) {
		lr, name := leaser(s, runDir, ws)
		return lr.Holder(ctx, name)
	}, ws, all)
}

// Holder is who holds ws now, and whether that holder lives.
func Holder(ctx context.Context, s store.Store, runDir, ws string) (store.Holder, bool) {
	lr, name := leaser(s, runDir, ws)
	h, err := lr.Holder(ctx, name)
	return h, err == nil && h.Live
}

// LockRuns takes ws's runs for a short write beside the drivers (a
// discard, a reset): the run dir's lock, or the workspace's lease in the
// database at url. A holder is refused with an error wrapping
// store.ErrBusy.
func LockRuns(ctx context.Context, runDir, url, ws string) (unlock func(), err error) {
	if url == "" {
		l, err := LeaseRunDir(ctx, runDir)
		if err != nil {
			return nil, err
		}
		return l.Release, nil
	}
	db, l, err := LeaseWorkspace(ctx, url, ws)
	if err != nil {
		return nil, err
	}
	return func() { l.Release(); db.Close() }, nil
}

// Discard abandons run id of ws: no wake finishes it (its sessions and
// rows stay). A discard is a write of run state, so it takes the runs'
// lock when it is free: a flower starting meanwhile cannot pick the run as
// its cut run and commit it back in flight. When a live flower holds the
// lock, the run is refused if that flower drives it, or has not yet
// claimed the run it drives (it may be about to take this one); a run the
// holder does not drive is discarded beside it. An unknown run is a
// *UsageError.
func Discard(ctx context.Context, s store.Store, runDir, url, ws, id string) error {
	unlock, err := LockRuns(ctx, runDir, url, ws)
	switch {
	case err == nil:
		defer unlock()
	case !errors.Is(err, store.ErrBusy):
		return err
	default:
		if err := drivenElsewhere(ctx, s, runDir, ws, id); err != nil {
			return err
		}
	}
	if err := workflow.Discard(ctx, s, ws, id, time.Now()); err != nil {
		return &UsageError{Err: err}
	}
	return nil
}

// drivenElsewhere refuses to discard run id while the live holder of the
// runs drives it or has not claimed its run yet.
func drivenElsewhere(ctx context.Context, s store.Store, runDir, ws, id string) error {
	runs, err := Runs(ctx, s, runDir, "", false)
	if err != nil {
		return err
	}
	claimed := false
	for _, r := range runs {
		if !r.Live {
			continue
		}
		if r.ID == id {
			return fmt.Errorf("run %s is being driven by pid %d: stop it first", r.ID, r.Owner.PID)
		}
		claimed = true
	}
	if o, live := Holder(ctx, s, runDir, ws); live && !claimed {
		return fmt.Errorf("pid %d is starting in %s and may be about to finish run %s: "+
			"discard it once flower ps shows which run that flower drives", o.PID, runDir, id)
	}
	return nil
}

// discardInFlight abandons the runs in flight of ws, after importing an
// older flower's run state so that its cut run goes too; the caller holds
// the runs' lock (LockRuns). It returns the runs discarded.
func discardInFlight(ctx context.Context, runDir, url, ws string, notice io.Writer) ([]string, error) {
	s, err := OpenStore(ctx, runDir, url)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	note, err := workflow.Upgrade(ctx, s, runDir, ws)
	if err != nil {
		return nil, err
	}
	if note != "" && notice != nil {
		noteTo(notice, "note: %s", note)
	}
	return workflow.DiscardAll(ctx, s, ws, time.Now())
}

// moveIncompatibleStore renames a run dir's sessions.db the store refuses
// (another schema version) aside, with its -wal and -shm, so a new one can
// be created; nothing is deleted. It returns where it went ("" if the
// store opened, or there is none).
func moveIncompatibleStore(runDir string, now time.Time) (string, error) {
	path := filepath.Join(runDir, StoreFile)
	if _, err := os.Stat(path); err != nil {
		return "", nil
	}
	if st, err := sqlite.Open(path); err == nil {
		st.Close()
		return "", nil
	}
	aside := path + "." + now.Format("20060102-150405") + ".old"
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(path+suffix, aside+suffix); err != nil && !os.IsNotExist(err) {
			return "", fmt.Errorf("move %s aside: %w", path+suffix, err)
		}
	}
	return aside, nil
}
