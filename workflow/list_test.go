package workflow

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/mem"
)

func TestDiscard(t *testing.T) { // R5.6
	ctx, s, ws := context.Background(), mem.New(), "/ws"
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, id := range []string{"run-1", "run-2"} {
		if err := s.Commit(ctx, store.Batch{Run: &store.Run{ID: id, Workspace: ws, Status: store.RunInFlight, Step: "work"}}); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := List(ctx, s, noHolder, ws, false)
	if err != nil || len(runs) != 2 || runs[0].Row != "" || runs[0].Live {
		t.Fatalf("List = %+v, %v", runs, err)
	}
	if err := Discard(ctx, s, ws, "nope", now); err == nil {
		t.Fatal("discarding an unknown run succeeded")
	}
	if err := Discard(ctx, s, "/other", "run-1", now); err == nil {
		t.Fatal("discarding another workspace's run succeeded")
	}
	if err := Discard(ctx, s, ws, "run-1", now); err != nil {
		t.Fatal(err)
	}
	if err := Discard(ctx, s, ws, "run-1", now); err == nil || !strings.Contains(err.Error(), "not in flight") {
		t.Fatalf("discarding twice: %v", err)
	}
	inFlight, _ := List(ctx, s, noHolder, ws, false)
	all, _ := List(ctx, s, noHolder, ws, true)
	if len(inFlight) != 1 || inFlight[0].ID != "run-2" || len(all) != 2 || all[0].Status != store.RunDiscarded {
		t.Fatalf("after discard: in flight %+v, all %+v", inFlight, all)
	}
	ids, err := DiscardAll(ctx, s, ws, now)
	if err != nil || len(ids) != 1 || ids[0] != "run-2" {
		t.Fatalf("DiscardAll = %v, %v", ids, err)
	}
	if runs, _ := List(ctx, s, noHolder, ws, false); len(runs) != 0 {
		t.Fatalf("in flight after DiscardAll: %+v", runs)
	}
}

// noHolder is a lease no one holds.
func noHolder(context.Context, string) (store.Holder, error) { return store.Holder{}, nil }
