package postgres_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
	l, err := a.Acquire(ctx, "/w/a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Acquire(ctx, "/w/a")
	var busy *store.BusyError
	if !errors.As(err, &busy) || !errors.Is(err, store.ErrBusy) || busy.Holder.PID != os.Getpid() ||
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
	l2, err := b.Acquire(ctx, "/w/a")
	if err != nil {
		t.Fatalf("Lease after Release: %v", err)
	}
	l2.Release()
}

// TestLeaseFencing: once the server ends the lease's session
// (pg_terminate_backend, or a worker's machine gone), the old holder can
// write nothing more, another process takes the lease at once, and only
// the new holder's writes land.
func TestLeaseFencing(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a, b := openAt(t, url), openAt(t, url)
	l, err := a.Acquire(ctx, "/w/a")
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
	// Refused at once, before anyone takes the lease over: the session that
	// held the lock is gone (the window a worker's cut tool call once wrote in).
	if err := old.Append(ctx, note("k", 9)); err == nil || !strings.Contains(err.Error(), "lease on /w/a lost") {
		t.Fatalf("Append by the holder whose session ended, before a takeover = %v, want the lease lost", err)
	}

	l2, err := b.Acquire(ctx, "/w/a")
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
		l, err := db.Acquire(context.Background(), "/w")
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

// Move is the leaseholder's store's (issue 22 item 3).
func (c closer) Move(ctx context.Context, from, to string) error {
	return c.Store.(store.Mover).Move(ctx, from, to)
}

func openAt(t *testing.T, url string, opts ...postgres.Option) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestLeaseTakeoverAfterTTL: a holder that stops heartbeating keeps its
// lease until its heartbeat is older than the TTL; then the next Lease
// takes it over, and the stale holder can write nothing more (issue 19).
// Time passes by ageing the heartbeat in the row, on the server's clock
// that judges it.
func TestLeaseTakeoverAfterTTL(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	const ttl = 30 * time.Second
	a, b := openAt(t, url, postgres.LeaseTTL(ttl)), openAt(t, url, postgres.LeaseTTL(ttl))
	l, err := a.Acquire(ctx, "/w/a")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	postgres.PauseHeartbeat(l) // A stops showing signs of life
	old := l.Store()
	if err := old.Append(ctx, note("k", 0)); err != nil {
		t.Fatal(err)
	}
	age := func(d time.Duration) {
		pgtest.Exec(t, url, fmt.Sprintf(`UPDATE leases SET heartbeat = now() - interval '%d milliseconds' WHERE name = '/w/a'`, d.Milliseconds()))
	}

	age(ttl - time.Second)
	if _, err := b.Acquire(ctx, "/w/a"); !errors.Is(err, store.ErrBusy) {
		t.Fatalf("Lease before the TTL = %v, want ErrBusy", err)
	}
	if h, err := b.Holder(ctx, "/w/a"); err != nil || !h.Live || h.PID != os.Getpid() {
		t.Fatalf("Holder before the TTL = %+v, %v; want live", h, err)
	}

	age(ttl + time.Second)
	if h, err := b.Holder(ctx, "/w/a"); err != nil || h.Live {
		t.Fatalf("Holder after the TTL = %+v, %v; want not live", h, err)
	}
	l2, err := b.Acquire(ctx, "/w/a")
	if err != nil {
		t.Fatalf("Lease after the TTL: %v", err)
	}
	defer l2.Release()
	if h, err := b.Holder(ctx, "/w/a"); err != nil || !h.Live {
		t.Fatalf("Holder after the takeover = %+v, %v; want live", h, err)
	}
	if err := old.Append(ctx, note("k", 1)); err == nil || !strings.Contains(err.Error(), "lease on /w/a lost") {
		t.Fatalf("Append by the stale holder = %v, want the lease lost", err)
	}
	select {
	case <-l.Lost():
	default:
		t.Error("Lost not closed after the stale holder's write failed")
	}
	if err := l2.Store().Append(ctx, note("k", 2)); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Load(ctx, "k"); err != nil || len(got) != 2 || got[1].UUID != "k#2" {
		t.Errorf("entries %v, %v; want k#0 and k#2 only", got, err)
	}
}

// The child process of the takeover tests: it takes the lease and
// appends to key "child" until a write fails.
const (
	childEnv = "FLOWER_LEASE_CHILD" // the URL of the child's store
	childTTL = "FLOWER_LEASE_CHILD_TTL"
)

// TestLeaseTakeoverOfAStoppedProcess: a real holder stopped with SIGSTOP
// is taken over within 2 TTLs of its stop; woken with SIGCONT, it writes
// nothing more: its next write fails (issue 19).
func TestLeaseTakeoverOfAStoppedProcess(t *testing.T) {
	if url := os.Getenv(childEnv); url != "" {
		leaseChild(url)
		return
	}
	ctx := context.Background()
	url := pgtest.URL(t)
	const ttl = time.Second
	child, out := startChild(t, url, ttl, "^TestLeaseTakeoverOfAStoppedProcess$")
	b := openAt(t, url, postgres.LeaseTTL(ttl))
	if err := child.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	l := acquireBy(t, b, "/w/a", stopped.Add(2*ttl))
	defer l.Release()
	t.Logf("takeover %v after SIGSTOP (TTL %v)", time.Since(stopped).Round(time.Millisecond), ttl)
	before, err := b.Load(ctx, "child")
	if err != nil {
		t.Fatal(err)
	}

	if err := child.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	last := waitChild(t, child, out)
	if !strings.HasPrefix(last, "lost") {
		t.Errorf("the woken child's last words: %q, want a failed write", last)
	}
	after, err := b.Load(ctx, "child")
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("the stale holder wrote %d entries after the takeover", len(after)-len(before))
	}
}

// TestLeaseTakeoverOfAKilledProcess: a holder killed with SIGKILL loses
// its lease with its connection, long before its TTL.
func TestLeaseTakeoverOfAKilledProcess(t *testing.T) {
	if url := os.Getenv(childEnv); url != "" {
		leaseChild(url)
		return
	}
	url := pgtest.URL(t)
	const ttl = time.Hour // a takeover is not the TTL's doing
	child, _ := startChild(t, url, ttl, "^TestLeaseTakeoverOfAKilledProcess$")
	b := openAt(t, url, postgres.LeaseTTL(ttl))
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	l := acquireBy(t, b, "/w/a", killed.Add(10*time.Second))
	defer l.Release()
	t.Logf("takeover %v after SIGKILL", time.Since(killed).Round(time.Millisecond))
}

// startChild starts the lease child running test and returns once it
// holds the lease, with its output.
func startChild(t *testing.T, url string, ttl time.Duration, test string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+test)
	cmd.Env = append(os.Environ(), childEnv+"="+url, childTTL+"="+ttl.String())
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Process.Signal(syscall.SIGCONT); cmd.Wait() })
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		if sc.Text() == "held" {
			return cmd, sc
		}
		if strings.HasPrefix(sc.Text(), "lease:") {
			t.Fatalf("child: %s", sc.Text())
		}
	}
	t.Fatalf("the child ended without the lease: %v", sc.Err())
	return nil, nil
}

// waitChild waits for the child to end and returns its last line.
func waitChild(t *testing.T, cmd *exec.Cmd, out *bufio.Scanner) string {
	t.Helper()
	var last string
	for out.Scan() {
		if !strings.HasPrefix(out.Text(), "ack") {
			last = out.Text()
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	return last
}

// acquireBy takes name's lease through db, trying again while it is busy
// until deadline.
func acquireBy(t *testing.T, db *postgres.DB, name string, deadline time.Time) *postgres.Lease {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		l, err := db.Acquire(context.Background(), name)
		if err == nil {
			return l
		}
		if !errors.Is(err, store.ErrBusy) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("still refused at the deadline: %v", err)
		}
		<-tick.C
	}
}

// leaseChild is the child: it takes the lease on /w/a, says "held", and
// appends to key "child" every 10 ms, saying "ack i" after each, until a
// write fails: then it says "lost: why" and exits.
func leaseChild(url string) {
	ttl, err := time.ParseDuration(os.Getenv(childTTL))
	if err != nil {
		fmt.Println("lease:", err)
		os.Exit(1)
	}
	ctx := context.Background()
	db, err := postgres.Open(ctx, url, postgres.LeaseTTL(ttl))
	if err != nil {
		fmt.Println("lease:", err)
		os.Exit(1)
	}
	l, err := db.Acquire(ctx, "/w/a")
	if err != nil {
		fmt.Println("lease:", err)
		os.Exit(1)
	}
	fmt.Println("held")
	s := l.Store()
	tick := time.NewTicker(10 * time.Millisecond)
	for i := 0; ; i++ {
		if err := s.Append(ctx, note("child", i)); err != nil {
			fmt.Println("lost:", err)
			os.Exit(0)
		}
		fmt.Printf("ack %d\n", i)
		<-tick.C
	}
}

// TestLeasesShareOneSession: the leases of one DB hold their locks on one
// connection (issue 19: a worker's 32 runs cost one, not 32); when that
// session ends, every one of them is lost, and once another process takes
// them over the old holder's writes, through the pool, fail: they are
// fenced by the lease row, not by the connection they go through.
func TestLeasesShareOneSession(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	const ttl = 300 * time.Millisecond // heartbeats every 100 ms
	a, b := openAt(t, url, postgres.LeaseTTL(ttl)), openAt(t, url, postgres.LeaseTTL(ttl))
	var leases []*postgres.Lease
	for i := range 5 {
		l, err := a.Acquire(ctx, fmt.Sprint("/w/", i))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		leases = append(leases, l)
	}
	if _, err := a.Acquire(ctx, "/w/0"); !errors.Is(err, store.ErrBusy) {
		t.Fatalf("a second lease of /w/0 by its own DB = %v, want ErrBusy", err)
	}
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var sessions int
	if err := c.QueryRow(ctx, `SELECT count(DISTINCT backend) FROM leases`).Scan(&sessions); err != nil || sessions != 1 {
		t.Fatalf("lease sessions = %d, %v; want 1", sessions, err)
	}
	backend, _ := leases[0].Backend()
	pgtest.Exec(t, url, fmt.Sprintf("SELECT pg_terminate_backend(%d, 10000)", backend))
	for i, l := range leases {
		select {
		case <-l.Lost():
		case <-time.After(10 * time.Second):
			t.Fatalf("lease %d not lost after its session ended", i)
		}
	}
	for i, l := range leases {
		l2, err := b.Acquire(ctx, fmt.Sprint("/w/", i))
		if err != nil {
			t.Fatalf("takeover of /w/%d: %v", i, err)
		}
		defer l2.Release()
		if err := l.Store().Append(ctx, note(fmt.Sprint("k", i), 0)); !errors.Is(err, postgres.ErrLost) {
			t.Errorf("a write of the old holder of /w/%d = %v, want ErrLost", i, err)
		}
		if err := l2.Store().Append(ctx, note(fmt.Sprint("k", i), 1)); err != nil {
			t.Errorf("a write of the new holder of /w/%d: %v", i, err)
		}
	}
	// The old DB leases again, on a new session.
	for _, l := range leases {
		l.Release()
	}
	if l, err := a.Acquire(ctx, "/w/new"); err != nil {
		t.Fatalf("a lease after the session ended: %v", err)
	} else {
		l.Release()
	}
}
