package flower_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/store"
)

// TestReset abandons a run in flight only once confirmed and while no one
// holds the run dir, and moves a store it cannot open aside (R5.6).
func TestReset(t *testing.T) {
	ctx := context.Background()
	ws, runDir := t.TempDir(), t.TempDir()
	s, err := flower.OpenStore(ctx, runDir, "")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	run := store.Run{ID: "20260101-000000-abcdef", Workspace: ws, Status: store.RunInFlight, Created: now, Updated: now}
	if err := s.Commit(ctx, store.Batch{Run: &run}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	status := func() store.RunStatus {
		t.Helper()
		s, err := flower.OpenStore(ctx, runDir, "")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		r, _, err := s.Run(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		return r.Status
	}

	if _, err := flower.Reset(ctx, runDir, "", ws, func() bool { return false }, nil); !errors.Is(err, flower.ErrCancelled) {
		t.Fatalf("a refused confirmation: %v, want ErrCancelled", err)
	}
	if st := status(); st != store.RunInFlight {
		t.Fatalf("after a cancelled reset the run is %s", st)
	}

	l, err := flower.LeaseRunDir(ctx, runDir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = flower.Reset(ctx, runDir, "", ws, nil, nil)
	l.Release()
	if want := fmt.Sprintf("pid %d is driving", os.Getpid()); !errors.Is(err, store.ErrBusy) || !strings.Contains(fmt.Sprint(err), want) {
		t.Fatalf("a reset while the run dir is held: %v, want ErrBusy saying %q", err, want)
	}

	r, err := flower.Reset(ctx, runDir, "", ws, func() bool { return true }, nil)
	if err != nil || !slices.Equal(r.Discarded, []string{run.ID}) || r.Moved != "" {
		t.Fatalf("a confirmed reset: %+v, %v", r, err)
	}
	if st := status(); st != store.RunDiscarded {
		t.Fatalf("after the reset the run is %s, want discarded", st)
	}

	db := filepath.Join(runDir, flower.StoreFile)
	if err := os.WriteFile(db, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err = flower.Reset(ctx, runDir, "", ws, nil, nil)
	if err != nil || r.Moved == "" || len(r.Discarded) != 0 {
		t.Fatalf("a reset of an unreadable store: %+v, %v", r, err)
	}
	if data, err := os.ReadFile(r.Moved); err != nil || string(data) != "not a database" {
		t.Fatalf("the store moved aside to %s: %q, %v", r.Moved, data, err)
	}
}
