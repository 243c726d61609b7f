package flower

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// TestReadStatus: flower status's facts come from the library (moved
// from cmd/flower, issue 19): nothing to continue without a store or a
// thread; a run in flight with nobody driving it; what the runs cost; an
// older flower's run state (R3.6).
func TestReadStatus(t *testing.T) {
	ctx := context.Background()
	ws, runDir := t.TempDir(), t.TempDir()
	st, err := ReadStatus(ctx, nil, runDir, ws)
	if err != nil || !st.Nothing() || st.Spent != nil || st.Older {
		t.Fatalf("no store: %+v %v", st, err)
	}
	s, err := sqlite.Open(filepath.Join(runDir, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	r := store.Run{ID: "20260101-000000-abcdef", Workspace: ws, Status: store.RunInFlight, Row: "work", Created: now, Updated: now}
	if err := s.Commit(ctx, store.Batch{Run: &r}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, oldStateFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = ReadStatus(ctx, s, runDir, ws)
	if err != nil || st.Nothing() || len(st.InFlight) != 1 || st.InFlight[0].Live || st.InFlight[0].Row != "work" {
		t.Fatalf("a cut run: %+v %v", st, err)
	}
	if st.Spent == nil || st.Spent.Runs != 1 || !st.Older {
		t.Errorf("spent %+v, older %v", st.Spent, st.Older)
	}
}
