package worker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/event/eventlog"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/postgres/pgtest"
	"github.com/flower-run/flower/worker"
)

// fakeModel points the Anthropic backend at the demo model's server
// (modeltest.Demo plays the starter flow), answering each request after
// delay, and gives the test a state dir of its own.
func fakeModel(t testing.TB, delay time.Duration) {
	t.Helper()
	demo := modeltest.Demo()
	srv := modeltest.NewAnthropic(func(r *modeltest.Request) modeltest.Turn {
		turn := demo(r)
		if turn.Fault == nil && delay > 0 {
			turn.Fault = &modeltest.Fault{Delay: delay}
		}
		return turn
	})
	t.Cleanup(srv.Close)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "test")
	t.Setenv("FLOWER_MODEL", flower.DefaultModel)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
}

func open(t testing.TB, url string, opts ...postgres.Option) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// submit queues n runs, each in a workspace of its own.
func submit(t testing.TB, db *postgres.DB, n int) []store.Run {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprint("ws", i)
	}
	return submitIn(t, db, t.TempDir(), names...)
}

// submitIn queues a run in each of the workspaces dir/name, made here.
func submitIn(t testing.TB, db *postgres.DB, dir string, names ...string) []store.Run {
	t.Helper()
	var runs []store.Run
	for _, name := range names {
		ws := filepath.Join(dir, name)
		if err := os.Mkdir(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		r, err := worker.Submit(context.Background(), db, ws, "write hello.txt", worker.AskTimeout(0))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	return runs
}

// buffer is the output of a worker, read while it writes.
type buffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// running is a Worker running in the test, with its output.
type running struct {
	*worker.Worker
	out  *buffer
	dir  string // its RunDir
	stop func() // cancels Run's context and waits for Run to return
}

func start(t testing.TB, o worker.Options) *running {
	t.Helper()
	out := &buffer{}
	o.Out, o.RunDir = out, t.TempDir()
	o.Poll = 20 * time.Millisecond
	w := worker.New(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	r := &running{Worker: w, out: out, dir: o.RunDir}
	r.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(r.stop)
	return r
}

// until polls cond, a state of the database, failing the test after a
// minute.
func until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		<-tick.C
	}
}

func finished(t testing.TB, db *postgres.DB, runs []store.Run) func() bool {
	return func() bool {
		for _, r := range runs {
			got, ok, err := db.Run(context.Background(), r.ID)
			if err != nil || !ok || got.Status != store.RunFinished {
				return false
			}
		}
		return true
	}
}

// checkRuns: every run passed its verdict, its work is there, and each
// workspace was written by one driver at a time (checkOneDriver).
func checkRuns(t *testing.T, url string, db *postgres.DB, runs []store.Run) {
	t.Helper()
	for _, r := range runs {
		got, _, err := db.Run(context.Background(), r.ID)
		if err != nil || got.Outcome != "passed" {
			t.Errorf("run %s: %s %s, %v; want passed", r.ID, got.Status, got.Outcome, err)
		}
		if _, err := os.Stat(filepath.Join(r.Workspace, "hello.txt")); err != nil {
			t.Errorf("run %s: %v", r.ID, err)
		}
		checkOneDriver(t, url, r.Workspace)
	}
}

// checkOneDriver reads which driver (lease session) wrote each entry of
// ws, in commit order: once a driver's writes are followed by another's,
// the first never writes again. Two drivers at once would interleave.
func checkOneDriver(t *testing.T, url, ws string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT backend FROM entries WHERE starts_with(key, $1) ORDER BY seq`, store.ProjectKey(ws)+"/")
	if err != nil {
		t.Fatal(err)
	}
	backends, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatal(err)
	}
	done := map[int32]bool{}
	for i, b := range backends {
		if i > 0 && b != backends[i-1] {
			done[backends[i-1]] = true
		}
		if done[b] {
			t.Errorf("%s: driver %d wrote again after another took over (%v)", ws, b, backends)
			return
		}
	}
}

// TestTwoWorkers: two workers, each with a DB of its own as on two
// machines, drive 8 runs; every run passes, none is driven by both.
func TestTwoWorkers(t *testing.T) {
	url := pgtest.URL(t)
	fakeModel(t, 0)
	db := open(t, url)
	runs := submit(t, db, 8)
	a := start(t, worker.Options{DB: open(t, url), Concurrency: 4, AskTimeout: time.Minute})
	b := start(t, worker.Options{DB: open(t, url), Concurrency: 4, AskTimeout: time.Minute})
	until(t, "all runs finish", finished(t, db, runs))
	a.stop()
	b.stop()
	checkRuns(t, url, db, runs)
	claims := strings.Count(a.out.String(), "claimed run") + strings.Count(b.out.String(), "claimed run")
	if claims != len(runs) {
		t.Errorf("%d claims for %d runs\n%s%s", claims, len(runs), a.out, b.out)
	}
}

// TestDrain: cancelling Run stops the worker's runs where they are and
// releases their leases; the runs stay in flight and another worker
// finishes them.
func TestDrain(t *testing.T) {
	url := pgtest.URL(t)
	fakeModel(t, 100*time.Millisecond)
	db := open(t, url)
	runs := submit(t, db, 4)
	a := start(t, worker.Options{DB: open(t, url), Concurrency: 4})
	until(t, "the worker drives all 4 runs past clarify", func() bool {
		if len(a.Running()) < 4 {
			return false
		}
		for _, r := range runs {
			got, _, _ := db.Run(context.Background(), r.ID)
			if !got.IsDone("clarify") {
				return false
			}
		}
		return true
	})
	a.stop()
	if out := a.out.String(); strings.Count(out, "stopped (draining)") != 4 || !strings.Contains(out, "worker: drained") {
		t.Fatalf("the drained worker said:\n%s", out)
	}
	hs, err := db.Holders(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if h, ok := hs[r.Workspace]; ok {
			t.Errorf("%s: lease still listed after the drain: %+v", r.Workspace, h)
		}
		if got, _, _ := db.Run(context.Background(), r.ID); got.Status != store.RunInFlight {
			t.Errorf("run %s after the drain: %s, want in flight", r.ID, got.Status)
		}
	}
	b := start(t, worker.Options{DB: open(t, url), Concurrency: 4})
	until(t, "the other worker finishes the runs", finished(t, db, runs))
	b.stop()
	checkRuns(t, url, db, runs)
}

// TestStaleWorker: a worker whose heartbeats stop (as under SIGSTOP) while
// it goes on working loses its leases to another worker within 2 TTLs;
// its writes fail from the takeover on (fenced), its runs stop, and the
// other finishes them, with no workspace written by both at once.
func TestStaleWorker(t *testing.T) {
	url := pgtest.URL(t)
	fakeModel(t, 400*time.Millisecond)
	const ttl = time.Second
	db := open(t, url, postgres.LeaseTTL(ttl))
	runs := submit(t, db, 4)
	adb := open(t, url, postgres.LeaseTTL(ttl))
	a := start(t, worker.Options{DB: adb, Concurrency: 4})
	until(t, "the worker drives all 4 runs past clarify", func() bool {
		for _, r := range runs {
			got, _, _ := db.Run(context.Background(), r.ID)
			if !got.IsDone("clarify") || got.Status != store.RunInFlight {
				return false
			}
		}
		return len(a.Running()) == 4
	})
	resume, err := adb.PauseHeartbeat(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer resume()
	paused := time.Now()
	b := start(t, worker.Options{DB: open(t, url, postgres.LeaseTTL(ttl)), Concurrency: 4})
	until(t, "the other worker takes every lease", func() bool {
		hs, err := db.Holders(context.Background())
		if err != nil {
			return false
		}
		for _, r := range runs {
			got, _, _ := db.Run(context.Background(), r.ID)
			if h := hs[r.Workspace]; got.Status == store.RunInFlight && !(h.Live && h.Since.After(paused)) {
				return false
			}
		}
		return true
	})
	took := time.Since(paused)
	t.Logf("takeover of a stale worker's 4 leases: %v (TTL %v)", took.Round(time.Millisecond), ttl)
	if took > 2*ttl+time.Second { // the claim's poll and a loaded machine's slack
		t.Errorf("takeover took %v, want about 2 TTLs at most", took)
	}
	until(t, "the runs finish", finished(t, db, runs))
	until(t, "the stale worker's runs stop", func() bool { return len(a.Running()) == 0 })
	a.stop()
	b.stop()
	if n := strings.Count(a.out.String(), "its lease was lost"); n == 0 {
		t.Errorf("the stale worker said no lease was lost:\n%s", a.out)
		logs, _ := filepath.Glob(filepath.Join(a.dir, "worker", "*.log"))
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, data)
		}
	}
	checkRuns(t, url, db, runs)
}

// clock is a Clock whose waits the test ends.
type clock struct {
	waits chan time.Duration
	fire  chan time.Time
}

func (c *clock) Now() time.Time { return time.Now() }
func (c *clock) After(d time.Duration) <-chan time.Time {
	c.waits <- d
	return c.fire
}

// TestIdleBackoff: a worker with nothing to do waits Poll, then twice as
// long each time, up to MaxPoll.
func TestIdleBackoff(t *testing.T) {
	url := pgtest.URL(t)
	c := &clock{waits: make(chan time.Duration, 100), fire: make(chan time.Time)}
	w := worker.New(worker.Options{DB: open(t, url), RunDir: t.TempDir(), Poll: time.Second, MaxPoll: 5 * time.Second, Clock: c})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var got []time.Duration
	for range 5 {
		got = append(got, <-c.waits)
		c.fire <- time.Now()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", got, want)
	}
}

// TestSubmitRefuses: a submission without a task or a workspace here is
// ErrInvalid, and queues nothing.
func TestSubmitRefuses(t *testing.T) {
	url := pgtest.URL(t)
	db := open(t, url)
	ctx := context.Background()
	if _, err := worker.Submit(ctx, db, t.TempDir(), "  "); !errors.Is(err, worker.ErrInvalid) {
		t.Errorf("no task: %v", err)
	}
	if _, err := worker.Submit(ctx, db, filepath.Join(t.TempDir(), "gone"), "x"); !errors.Is(err, worker.ErrInvalid) || !strings.Contains(err.Error(), "shared filesystem") {
		t.Errorf("no workspace: %v", err)
	}
	if runs, err := db.Runs(ctx, ""); err != nil || len(runs) != 0 {
		t.Errorf("runs %v, %v; want none", runs, err)
	}
}

// TestPoolSize: a quarter of the runs plus four, capped, so 64 runs on 2
// workers stay within 40 connections with each worker's lease session
// and LISTEN connection (issue 19).
func TestPoolSize(t *testing.T) {
	for n, want := range map[int]int{1: 4, 32: 12, 64: 20, 1000: 32} {
		if got := worker.PoolSize(n); got != want {
			t.Errorf("PoolSize(%d) = %d, want %d", n, got, want)
		}
	}
	if total := 2 * (worker.PoolSize(32) + 2); total > 40 {
		t.Errorf("two workers of 32 runs: %d connections, want at most 40", total)
	}
}

// TestWorkerStoresEvents: a driven run's events are kept in the store's
// event log in order (deltas are not stored) and ended cleanly, as GET
// /runs/ID/events of any flower serve --runs reads them; the worker keeps
// them with front/web's Stream, the one stored stream (issue 19).
func TestWorkerStoresEvents(t *testing.T) {
	url := pgtest.URL(t)
	fakeModel(t, 0)
	db := open(t, url)
	runs := submit(t, db, 1)
	w := start(t, worker.Options{DB: open(t, url), Concurrency: 1})
	until(t, "the run finishes", finished(t, db, runs))
	w.stop()
	ctx := context.Background()
	key := store.SideLog(runs[0].Workspace, store.EventLog)
	got, err := eventlog.Reader{Log: db, Stream: key}.After(ctx, 0, 0)
	if err != nil || len(got) < 5 {
		t.Fatalf("%d stored events, %v\n%s", len(got), err, w.out)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq <= got[i-1].Seq {
			t.Fatalf("seq %d after %d", got[i].Seq, got[i-1].Seq)
		}
	}
	last := got[len(got)-1].Seq
	start, lost, err := eventlog.Resume(ctx, db, key)
	if err != nil || lost != 0 || start < last {
		t.Errorf("resume at %d (lost %d, %v) after #%d: the stream did not end cleanly", start, lost, err, last)
	}
}

// TestSubmitter: flower submit and POST /runs queue through one
// Submitter: the ask timeout given is the run's, none leaves it to the
// worker, and an invalid submission wraps ErrInvalid (issue 19: it was
// a closure in cmd/flower).
func TestSubmitter(t *testing.T) {
	db := open(t, pgtest.URL(t))
	ctx := context.Background()
	submit := worker.Submitter(db)
	secs := 90.0
	r, err := submit(ctx, t.TempDir(), "write hello.txt", &secs)
	if err != nil || r.AskTimeout == nil || *r.AskTimeout != 90 {
		t.Fatalf("%+v %v", r, err)
	}
	if got, ok, err := db.Run(ctx, r.ID); err != nil || !ok || got.AskTimeout == nil || *got.AskTimeout != 90 {
		t.Errorf("stored %+v %v %v", got, ok, err)
	}
	if r, err := submit(ctx, t.TempDir(), "x", nil); err != nil || r.AskTimeout != nil {
		t.Errorf("no timeout: %+v %v", r, err)
	}
	if _, err := submit(ctx, "/", "x", nil); !errors.Is(err, worker.ErrInvalid) {
		t.Errorf("/: %v", err)
	}
}
