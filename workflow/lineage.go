package workflow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flower-run/flower/internal/atomicfile"
	"github.com/flower-run/flower/store"
)

// Archive ends a workspace's thread (R3.13): the brief, the goals and the
// lineage export move into notes/archive/<time>/, runs in flight are
// discarded, and the store starts a new thread (no bindings, wake count
// zero). The files move first: a crash before the store commit leaves the
// old thread connected without its notes, and running --new again
// finishes the archive. Sessions and rows stay.
func Archive(ctx context.Context, s store.Store, runDir, ws string, now time.Time) (into string, err error) {
	into = filepath.Join(ws, ArchiveDir, now.Format("20060102-150405"))
	if err := os.MkdirAll(into, 0o755); err != nil {
		return "", fmt.Errorf("archive: %w", err)
	}
	for _, p := range []string{filepath.Join(runDir, LineageFile), filepath.Join(ws, BriefPath), filepath.Join(ws, GoalsPath)} {
		err := os.Rename(p, filepath.Join(into, filepath.Base(p)))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("archive %s: %w", p, err)
		}
	}
	if err := atomicfile.SyncDir(into); err != nil {
		return "", fmt.Errorf("archive: %w", err)
	}
	if _, err := DiscardAll(ctx, s, ws, now); err != nil {
		return "", err
	}
	if err := s.Commit(ctx, store.Batch{Archive: ws}); err != nil {
		return "", fmt.Errorf("archive: %w", err)
	}
	return into, ExportLineage(ctx, s, runDir, ws)
}
