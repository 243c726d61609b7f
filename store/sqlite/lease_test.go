package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

func TestLeaseRefusesASecondDriver(t *testing.T) { // DESIGN §3.6
	ctx, dir := context.Background(), t.TempDir()
	since := time.Date(2026, 1, 2, 15, 4, 5, 0, time.Local)
	dirs := sqlite.Dirs{Now: func() time.Time { return since }}
	l, err := dirs.Lease(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = dirs.Lease(ctx, dir)
	var busy *store.BusyError
	if !errors.As(err, &busy) || !errors.Is(err, store.ErrBusy) || busy.Holder.PID != os.Getpid() || !busy.Holder.Since.Equal(since) ||
		!strings.Contains(err.Error(), fmt.Sprintf("flower pid %d on ", os.Getpid())) {
		t.Fatalf("second Lease: %v", err)
	}
	if h, err := dirs.Holder(ctx, dir); err != nil || !h.Live || h.PID != os.Getpid() || h.Name != dir {
		t.Fatalf("holder %+v, %v", h, err)
	}
	if l.Lost() != nil {
		t.Error("a file lock says it can be lost")
	}
	l.Release()
	l.Release() // twice is harmless
	if h, _ := dirs.Holder(ctx, dir); h.Live {
		t.Fatal("lock still held after Release")
	}
	l2, err := dirs.Lease(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	l2.Release()
}

// TestHolderNeverTakesTheLock: a reader testing the lock while a driver
// starts must never make that driver fail (issue 9: 43 of 2,000 tries).
func TestHolderNeverTakesTheLock(t *testing.T) { // DESIGN §3.6
	ctx, dir := context.Background(), t.TempDir()
	var dirs sqlite.Dirs
	l, err := dirs.Lease(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 2000; i++ {
			dirs.Holder(ctx, dir)
		}
	}()
	for i := 0; i < 500; i++ {
		l, err := dirs.Lease(ctx, dir)
		if err != nil {
			t.Fatalf("try %d: Lease failed while only a reader looked: %v", i, err)
		}
		l.Release()
	}
	<-done
}
