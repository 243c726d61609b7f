package workflow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/flower-run/flower/internal/atomicfile"
	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/store"
)

// Archive ends a workspace's thread (R3.13): the lineage export and the
// files the caller names (absolute paths; the starter's brief and goals,
// say) move into the directory into, runs in flight are discarded, and the
// store starts a new thread (no bindings, wake count zero). The engine
// knows no notes of its own: what belongs to a thread besides its lineage
// is the caller's. The files move first: a crash before the store commit
// leaves the old thread connected without its notes, and archiving again
// finishes the archive. Sessions and rows stay.
func Archive(ctx context.Context, s store.Store, runDir, ws, into string, now time.Time, files ...string) error {
	if err := os.MkdirAll(into, 0o755); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	// A rename is durable once both directories are synced.
	dirs := map[string]bool{into: true}
	for _, p := range append([]string{filepath.Join(runDir, LineageFile)}, files...) {
		err := os.Rename(p, filepath.Join(into, filepath.Base(p)))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("archive %s: %w", p, err)
		}
		dirs[filepath.Dir(p)] = err == nil || dirs[filepath.Dir(p)]
	}
	for _, dir := range slices.Sorted(maps.Keys(dirs)) { // sorted: the failpoints count in a fixed order
		if !dirs[dir] {
			continue
		}
		if err := atomicfile.SyncDir(dir); err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		failpoint.Durable("fsync dir " + filepath.Base(dir) + " (archive)")
	}
	if _, err := DiscardAll(ctx, s, ws, now); err != nil {
		return err
	}
	if err := s.Commit(ctx, store.Batch{Archive: ws}); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	return ExportLineage(ctx, s, runDir, ws)
}
