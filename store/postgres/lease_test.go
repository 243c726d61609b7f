package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/postgres/pgtest"
)

func note(key string, n int) store.Entry {
	return store.Entry{UUID: fmt.Sprintf("%s#%d", key, n), Key: key, Kind: store.KindNote, Text: fmt.Sprint(n)}
}

// TestLeaseBusy: a second driver of a workspace is refused at once, with
// the holder's pid; after Release the lease can be taken again, and ps
// (Holders) tells live from gone.
func TestLeaseBusy(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a, b := openAt(t, url), openAt(t, url)
	l, err := a.Lease(ctx, "/w/a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Lease(ctx, "/w/a")
	var busy *postgres.BusyError
	if !errors.As(err, &busy) || !errors.Is(err, postgres.ErrBusy) || busy.Holder.PID != os.Getpid() ||
		!strings.Contains(err.Error(), fmt.Sprintf("flower pid %d on ", os.Getpid())) {
		t.Fatalf("second Lease = %v, want ErrBusy naming pid %d", err, os.Getpid())
	}
	other, err := b.Lease(ctx, "/w/b") // another workspace is free
	if err != nil {
		t.Fatalf("Lease of another workspace: %v", err)
	}
	other.Release()
	hs, err := b.Holders(ctx)
	if err != nil || !hs["/w/a"].Live || hs["/w/a"].PID != os.Getpid() {
		t.Fatalf("Holders = %+v, %v; want /w/a live", hs, err)
	}
	if _, ok := hs["/w/b"]; ok {
		t.Errorf("a released lease still listed: %+v", hs["/w/b"])
	}
	l.Release()
	l.Release() // twice is harmless
	l2, err := b.Lease(ctx, "/w/a")
	if err != nil {
		t.Fatalf("Lease after Release: %v", err)
	}
	l2.Release()
}

// TestLeaseFencing: once the server ends the lease's connection
// (pg_terminate_backend, or a worker's machine gone), the old holder can
// write nothing more, another process takes the lease at once, and only
// the new holder's writes land.
func TestLeaseFencing(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a, b := openAt(t, url), openAt(t, url)
	l, err := a.Lease(ctx, "/w/a")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	old := l.Store()
	if err := old.Append(ctx, note("k", 0)); err != nil {
		t.Fatalf("Append by the holder: %v", err)
	}
	backend, err := l.Backend()
	if err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, url, fmt.Sprintf("SELECT pg_terminate_backend(%d, 10000)", backend))

	l2, err := b.Lease(ctx, "/w/a")
	if err != nil {
		t.Fatalf("Lease after the holder's backend was terminated: %v", err)
	}
	defer l2.Release()
	if err := old.Append(ctx, note("k", 1)); err == nil || !strings.Contains(err.Error(), "lease on /w/a lost") {
		t.Fatalf("Append by the old holder = %v, want the lease lost", err)
	}
	select {
	case <-l.Lost():
	default:
		t.Error("Lost not closed after a write failed on a dead connection")
	}
	if err := l2.Store().Append(ctx, note("k", 2)); err != nil {
		t.Fatalf("Append by the new holder: %v", err)
	}
	got, err := b.Load(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].UUID != "k#0" || got[1].UUID != "k#2" {
		t.Errorf("entries %v, want k#0 and k#2 only", got)
	}
}

// TestLeaseStoreConformance: the leaseholder's view of the store is a
// whole store.
func TestLeaseStoreConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite once more, through a lease")
	}
	storetestRun(t, func(t *testing.T) store.Store {
		db := openNew(t)
		l, err := db.Lease(context.Background(), "/w")
		if err != nil {
			t.Fatal(err)
		}
		return closer{Store: l.Store(), close: func() error { l.Release(); return db.Close() }}
	})
}

type closer struct {
	store.Store
	close func() error
}

func (c closer) Close() error { return c.close() }

func openAt(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
