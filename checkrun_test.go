package flower_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/wake"
)

// TestCheckRun refuses a --run that names no run in flight, before
// anything is created, and lets a run in flight through.
func TestCheckRun(t *testing.T) {
	ctx := context.Background()
	ws, runDir := t.TempDir(), filepath.Join(t.TempDir(), "state")
	var noRun *wake.NoRunError
	if err := flower.CheckRun(ctx, runDir, "", ws, "20260101-000000-abcdef"); !errors.As(err, &noRun) {
		t.Fatalf("no store: %v, want a NoRunError", err)
	}
	if _, err := os.Stat(runDir); !os.IsNotExist(err) {
		t.Fatalf("a refused --run created %s", runDir)
	}
	s, err := flower.OpenStore(ctx, mkdir(t, runDir), "")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, r := range []store.Run{
		{ID: "20260101-000001-aaaaaa", Workspace: ws, Status: store.RunInFlight, Created: now, Updated: now},
		{ID: "20260101-000002-bbbbbb", Workspace: ws, Status: store.RunFinished, Created: now, Updated: now},
	} {
		if err := s.Commit(ctx, store.Batch{Run: &r}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if err := flower.CheckRun(ctx, runDir, "", ws, "20260101-000001-aaaaaa"); err != nil {
		t.Errorf("the run in flight: %v", err)
	}
	for _, id := range []string{"20260101-000002-bbbbbb", "20260101-000009-zzzzzz"} {
		if err := flower.CheckRun(ctx, runDir, "", ws, id); !errors.As(err, &noRun) || noRun.ID != id {
			t.Errorf("run %s (finished, unknown): %v, want a NoRunError", id, err)
		}
	}
	if err := flower.CheckRun(ctx, runDir, "", ws, ""); err != nil {
		t.Errorf("no --run: %v", err)
	}
}

func mkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}
