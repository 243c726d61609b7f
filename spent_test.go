package flower_test

import (
	"context"
	"testing"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/store"
)

// TestSpending adds up every run's step rows, and names the newest run no
// longer in flight as the last one, on a real SQLite store (issue 11).
func TestSpending(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	s, err := flower.OpenStore(ctx, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if sp, err := flower.Spending(ctx, s, ws); err != nil || sp.Runs != 0 || sp.Last != nil {
		t.Fatalf("no runs: %+v, %v", sp, err)
	}
	now := time.Now()
	for i, r := range []struct {
		id     string
		status store.RunStatus
		costs  []float64
	}{
		{"20260101-000001-aaaaaa", store.RunFinished, []float64{0.25, 0.5}},
		{"20260101-000002-bbbbbb", store.RunDiscarded, []float64{1}},
		{"20260101-000003-cccccc", store.RunInFlight, []float64{2}},
	} {
		at := now.Add(time.Duration(i) * time.Second)
		run := store.Run{ID: r.id, Workspace: ws, Status: r.status, Created: at, Updated: at}
		b := store.Batch{Run: &run}
		for j, c := range r.costs {
			b.Results = append(b.Results, store.StepResult{Run: r.id, Step: string(rune('a' + j)), CostUSD: c, OK: true})
		}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	sp, err := flower.Spending(ctx, s, ws)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Total != 3.75 || sp.Runs != 3 {
		t.Errorf("total $%v over %d runs, want $3.75 over 3", sp.Total, sp.Runs)
	}
	if sp.Last == nil || sp.Last.ID != "20260101-000002-bbbbbb" || sp.LastCost != 1 {
		t.Errorf("last run %+v at $%v, want the discarded one at $1", sp.Last, sp.LastCost)
	}
}
