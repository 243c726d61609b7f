package workflow

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/postgres/pgtest"
	"github.com/flower-run/flower/store/sqlite"
)

// TestMarkOnlyForTheRunDirsOwnStore (issue 22 item 2, issue 19): the
// exports write the high-water mark beside a SQLite store of the run
// dir's own, which a damaged file can shrink, and none for a store that
// many workspaces share (PostgreSQL), whose mark nothing checks.
func TestMarkOnlyForTheRunDirsOwnStore(t *testing.T) {
	ctx := context.Background()
	lite, err := sqlite.Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg, err := postgres.Open(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	for _, c := range []struct {
		name string
		s    store.Store
		mark bool
	}{{"sqlite", lite, true}, {"postgres", pg, false}} {
		t.Run(c.name, func(t *testing.T) {
			runDir, ws := t.TempDir(), t.TempDir()
			if err := c.s.Commit(ctx, store.Batch{Run: &store.Run{ID: "r1", Workspace: ws, Status: store.RunInFlight}}); err != nil {
				t.Fatal(err)
			}
			if err := ExportManifest(ctx, c.s, runDir, ws); err != nil {
				t.Fatal(err)
			}
			if err := ExportLineage(ctx, c.s, runDir, ws); err != nil {
				t.Fatal(err)
			}
			_, err := os.Stat(filepath.Join(runDir, MarkFile))
			if got := !errors.Is(err, os.ErrNotExist); got != c.mark {
				t.Errorf("%s written: %v, want %v (stat: %v)", MarkFile, got, c.mark, err)
			}
			for _, f := range []string{ManifestFile, LineageFile} {
				if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
					t.Errorf("export %s: %v", f, err)
				}
			}
			// A mark that names a run the store lacks is damage only where
			// a mark guards the store.
			if err := writeJSON(filepath.Join(runDir, MarkFile), Mark{Workspace: ws, Runs: []string{"r1", "gone"}}); err != nil {
				t.Fatal(err)
			}
			var damage *DamageError
			if err := CheckMark(ctx, c.s, runDir, ws); errors.As(err, &damage) != c.mark {
				t.Errorf("CheckMark with a mark the store fell short of: %v, want damage: %v", err, c.mark)
			}
		})
	}
}
