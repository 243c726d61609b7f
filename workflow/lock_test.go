package workflow

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/mem"
)

func TestLockRefusesASecondDriver(t *testing.T) { // DESIGN §3.6
	dir := t.TempDir()
	unlock, err := Lock(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(dir, time.Now())
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second Lock: %v", err)
	}
	if strings.Contains(err.Error(), "-r RUN_DIR") {
		t.Errorf("the refusal advises a second run dir, which lets two drivers work one workspace: %v", err)
	}
	if o, live := Holder(dir); !live || o.PID != os.Getpid() {
		t.Fatalf("holder %+v live=%v", o, live)
	}
	unlock()
	if _, live := Holder(dir); live {
		t.Fatal("lock still held after unlock")
	}
	unlock2, err := Lock(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	unlock2()
}

// TestHolderNeverTakesTheLock: a reader testing the lock while a driver
// starts must never make that driver fail (issue 9: 43 of 2,000 tries).
func TestHolderNeverTakesTheLock(t *testing.T) { // DESIGN §3.6
	dir := t.TempDir()
	unlock, err := Lock(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 2000; i++ {
			Holder(dir)
		}
	}()
	for i := 0; i < 500; i++ {
		unlock, err := Lock(dir, time.Now())
		if err != nil {
			t.Fatalf("try %d: Lock failed while only a reader looked: %v", i, err)
		}
		unlock()
	}
	<-done
}

func TestDiscard(t *testing.T) { // R5.6
	ctx, s, ws := context.Background(), mem.New(), "/ws"
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, id := range []string{"run-1", "run-2"} {
		if err := s.Commit(ctx, store.Batch{Run: &store.Run{ID: id, Workspace: ws, Status: store.RunInFlight, Step: "work"}}); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := List(ctx, s, t.TempDir(), ws, false)
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
	inFlight, _ := List(ctx, s, t.TempDir(), ws, false)
	all, _ := List(ctx, s, t.TempDir(), ws, true)
	if len(inFlight) != 1 || inFlight[0].ID != "run-2" || len(all) != 2 || all[0].Status != store.RunDiscarded {
		t.Fatalf("after discard: in flight %+v, all %+v", inFlight, all)
	}
	ids, err := DiscardAll(ctx, s, ws, now)
	if err != nil || len(ids) != 1 || ids[0] != "run-2" {
		t.Fatalf("DiscardAll = %v, %v", ids, err)
	}
	if runs, _ := List(ctx, s, t.TempDir(), ws, false); len(runs) != 0 {
		t.Fatalf("in flight after DiscardAll: %+v", runs)
	}
}
