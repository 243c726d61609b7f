package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/postgres/pgtest"
)

// until polls cond (a database state another process changes: there is
// nothing to wait on in-process) until it holds, failing the test past the
// guard.
func until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(3 * guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, 3*guard)
		}
		<-tick.C
	}
}

var claimedLine = regexp.MustCompile(`claimed run (\S+) in \S+ \(driver pid (\d+)\)`)

// TestWorkers is the real-process test: a PostgreSQL server, 3
// workers, 10 submitted runs against the fake model. One worker is
// SIGKILLed mid-run (its runs, goroutines of it, die with it), another's
// lease session is ended by pg_terminate_backend (all its runs lose their
// leases and stop; its fenced writes fail once another takes over). All 10 runs finish, every completed
// effect happened once and every ambiguous one within the retry policy,
// and the store shows no workspace written by two drivers at once.
func TestWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("10 runs by 3 worker processes")
	}
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	_, env := fakeModel(t)
	env = append(env, storeEnv+"="+url)
	dir := t.TempDir()
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	const runs = 10
	wss := submitRuns(t, dir, env, runs)
	var workers []*proc
	for i := range 3 {
		workers = append(workers, startFlower(t, dir, env, false, "worker", "--concurrency", "2", "--poll", "50ms", "--ask-timeout", "0",
			"-r", filepath.Join(dir, fmt.Sprint("worker", i))))
	}

	// Worker 0 dies once a run it drives is past clarify.
	victim := workers[0]
	var cut string
	until(t, "worker 0 drives a run past clarify", func() bool {
		for _, m := range claimedLine.FindAllStringSubmatch(victim.stdout.String(), -1) {
			if r, ok, _ := db.Run(ctx, m[1]); ok && r.IsDone("clarify") && r.Status == store.RunInFlight {
				cut = m[1]
				return true
			}
		}
		return false
	})
	victim.cmd.Process.Kill()
	killed := time.Now()
	victim.wait()
	cutRun, _, _ := db.Run(ctx, cut)
	until(t, "another worker takes the killed worker's run", func() bool {
		hs, _ := db.Holders(ctx)
		h := hs[cutRun.Workspace]
		r, _, _ := db.Run(ctx, cut)
		return (h.Live && !slicesContainsPID(victim, h.PID)) || r.Status == store.RunFinished
	})
	t.Logf("failover after SIGKILL of a worker: %v (the server freed its leases at once)", time.Since(killed).Round(time.Millisecond))

	// Another worker's lease session is ended: all its runs lose their leases.
	var term string
	until(t, "a surviving worker drives a run with a live lease", func() bool {
		hs, _ := db.Holders(ctx)
		for _, h := range hs {
			if h.Live && (slicesContainsPID(workers[1], h.PID) || slicesContainsPID(workers[2], h.PID)) {
				pgtest.Exec(t, url, fmt.Sprintf("SELECT pg_terminate_backend(backend, 10000) FROM leases WHERE pid = %d", h.PID))
				term = h.Name
				return true
			}
		}
		return false
	})
	terminated := time.Now()
	until(t, "the terminated driver's workspace is driven again", func() bool {
		hs, _ := db.Holders(ctx)
		r := runsOfWorkspace(ctx, db, term)
		return hs[term].Live || (len(r) > 0 && r[0].Status == store.RunFinished)
	})
	t.Logf("failover after pg_terminate_backend: %v", time.Since(terminated).Round(time.Millisecond))

	until(t, "all 10 runs finish", func() bool {
		all, err := db.Runs(ctx, "")
		if err != nil {
			return false
		}
		n := 0
		for _, r := range all {
			if r.Status == store.RunFinished {
				n++
			}
		}
		return n == runs
	})
	for _, w := range workers[1:] {
		w.cmd.Process.Signal(syscall.SIGTERM)
		if r := w.wait(); r.code != 0 || !strings.Contains(r.stdout, "drained") {
			t.Errorf("worker after SIGTERM: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	all, _ := db.Runs(ctx, "")
	for _, r := range all {
		if r.Outcome != "passed" {
			t.Errorf("run %s in %s: %s %s", r.ID, r.Workspace, r.Status, r.Outcome)
		}
	}
	for _, ws := range wss {
		if got := readFile(t, filepath.Join(ws, "out.txt")); got != "hi\n" {
			t.Errorf("%s/out.txt = %q", ws, got)
		}
		checkEffects(t, ctx, db, ws)
		checkOneDriver(t, url, ws)
	}
}

// submitRuns submits n runs of testTask, each in a new workspace wsI under
// dir, with flower submit; it returns the workspaces.
func submitRuns(t *testing.T, dir string, env []string, n int) []string {
	t.Helper()
	var wss []string
	for i := range n {
		ws := filepath.Join(dir, fmt.Sprint("ws", i))
		if err := os.Mkdir(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		r := runFlower(t, dir, env, "submit", "--workspace", ws, testTask)
		if r.code != 0 || strings.TrimSpace(r.stdout) == "" {
			t.Fatalf("submit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		wss = append(wss, ws)
	}
	return wss
}

func slicesContainsPID(w *proc, pid int) bool {
	for _, m := range claimedLine.FindAllStringSubmatch(w.stdout.String(), -1) {
		if m[2] == strconv.Itoa(pid) {
			return true
		}
	}
	return false
}

func runsOfWorkspace(ctx context.Context, db *postgres.DB, ws string) []store.Run {
	r, _ := db.Runs(ctx, ws)
	return r
}

// checkEffects: in every session of ws, each op has at most one result
// (a completed effect happened once) and at most one recorded
// re-execution (an ambiguous one at most twice under retry, R5.7).
func checkEffects(t *testing.T, ctx context.Context, db *postgres.DB, ws string) {
	t.Helper()
	metas, err := db.Sessions(ctx, store.ProjectKey(ws)+"/")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range metas {
		entries, err := db.Load(ctx, m.Key)
		if err != nil {
			t.Fatal(err)
		}
		results, attempts := map[string]int{}, map[string]int{}
		for _, e := range entries {
			switch {
			case e.Kind == store.KindResult && e.Op != nil:
				results[e.Op.ID]++
			case e.Kind == store.KindAttempt && e.Op != nil:
				attempts[e.Op.ID]++
			}
		}
		for op, n := range results {
			if n > 1 {
				t.Errorf("%s: op %s has %d results, want one", m.Key, op, n)
			}
		}
		for op, n := range attempts {
			if n > 1 {
				t.Errorf("%s: op %s re-executed %d times, want at most once", m.Key, op, n)
			}
		}
	}
}

// checkOneDriver reads, from the store, which server process wrote each
// entry of ws, in commit order: once a driver's writes are followed by
// another's, the first never writes again. Two drivers at once would
// interleave.
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
	var order []int32
	for i, b := range backends {
		if i > 0 && b != backends[i-1] {
			done[backends[i-1]] = true
			order = append(order, b)
		}
		if done[b] {
			t.Errorf("%s: backend %d wrote again after another driver took over (drivers in order %v)", ws, b, order)
			return
		}
	}
}

// TestWorkerMissingWorkspace: a worker that does not see a run's
// workspace says so in one line and leaves the run queued for another;
// SIGTERM then ends it cleanly. submit refuses a workspace that is not
// there, and a worker or submit without a database is one usage line.
func TestWorkerMissingWorkspace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	_, env := fakeModel(t)
	env = append(env, storeEnv+"="+url)
	dir := t.TempDir()
	ws := filepath.Join(dir, "elsewhere")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	sub := runFlower(t, dir, env, "submit", "--workspace", ws, testTask)
	id := strings.TrimSpace(sub.stdout)
	if sub.code != 0 || id == "" {
		t.Fatalf("submit: exit %d\n%s%s", sub.code, sub.stdout, sub.stderr)
	}
	if err := os.Remove(ws); err != nil { // on another machine's disk only
		t.Fatal(err)
	}
	w := startFlower(t, dir, env, false, "worker", "--poll", "20ms")
	w.waitOutput("left queued for another")
	w.cmd.Process.Signal(syscall.SIGTERM)
	r := w.wait()
	want := fmt.Sprintf("worker: run %s: workspace %s is missing on this worker (workspaces must be on a shared filesystem): left queued for another\n", id, ws)
	if r.code != 0 || strings.Count(r.stdout, "is missing") != 1 || !strings.Contains(r.stdout, want) {
		t.Errorf("worker: exit %d, want once %q\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if run, ok, err := db.Run(ctx, id); err != nil || !ok || run.Status != store.RunInFlight || run.Holder != "" {
		t.Errorf("the run after the worker: %+v, %v, %v; want queued (in flight, no holder)", run, ok, err)
	}

	if r := runFlower(t, dir, env, "submit", "--workspace", ws, testTask); r.code != exitUsage || !strings.Contains(r.stderr, "shared filesystem") {
		t.Errorf("submit to a missing workspace: exit %d\n%s", r.code, r.stderr)
	}
	for _, cmd := range [][]string{{"worker"}, {"submit", "x"}} {
		if r := runFlower(t, dir, nil, cmd...); r.code != exitUsage || !strings.Contains(r.stderr, "--store postgres://") {
			t.Errorf("%v without a database: exit %d\n%s", cmd, r.code, r.stderr)
		}
	}
}

// TestWorkerStopped: a worker process stopped with SIGSTOP mid-run loses
// its leases to another worker within 2 TTLs (FLOWER_LEASE_TTL=1s); woken
// with SIGCONT, its runs' writes fail (fenced) and it says so; the other
// worker finishes every run, each effect once, no workspace written by
// both at once (issue 19).
func TestWorkerStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("2 worker processes, one stopped")
	}
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	const ttl = time.Second
	_, env := fakeModelWith(t, func(r *modeltest.Request) modeltest.Turn {
		turn := play(r)
		if turn.Fault == nil {
			turn.Fault = &modeltest.Fault{Delay: 150 * time.Millisecond}
		}
		return turn
	})
	env = append(env, storeEnv+"="+url, postgres.TTLEnv+"="+ttl.String())
	dir := t.TempDir()
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const runs = 4
	wss := submitRuns(t, dir, env, runs)
	startWorker := func(name string) *proc {
		return startFlower(t, dir, env, false, "worker", "--concurrency", fmt.Sprint(runs), "--poll", "50ms", "--ask-timeout", "0",
			"-r", filepath.Join(dir, name))
	}
	a := startWorker("a")
	until(t, "worker a drives every run, one past clarify", func() bool {
		if strings.Count(a.stdout.String(), "claimed run") < runs {
			return false
		}
		for _, m := range claimedLine.FindAllStringSubmatch(a.stdout.String(), -1) {
			if r, ok, _ := db.Run(ctx, m[1]); ok && r.IsDone("clarify") && r.Status == store.RunInFlight {
				return true
			}
		}
		return false
	})
	b := startWorker("b")
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	until(t, "worker b holds every run in flight", func() bool {
		hs, err := db.Holders(ctx)
		all, err2 := db.Runs(ctx, "")
		if err != nil || err2 != nil {
			return false
		}
		for _, r := range all {
			if h := hs[r.Workspace]; r.Status == store.RunInFlight && !(h.Live && h.PID == b.cmd.Process.Pid) {
				return false
			}
		}
		return true
	})
	took := time.Since(stopped)
	t.Logf("takeover of a SIGSTOPped worker's runs: %v (TTL %v)", took.Round(time.Millisecond), ttl)
	if took > 2*ttl+time.Second { // the claim's poll and a loaded machine's slack
		t.Errorf("takeover after SIGSTOP took %v, want about 2 TTLs at most", took)
	}
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	until(t, "all runs finish", func() bool {
		all, err := db.Runs(ctx, "")
		n := 0
		for _, r := range all {
			if r.Status == store.RunFinished {
				n++
			}
		}
		return err == nil && n == runs
	})
	for _, w := range []*proc{a, b} {
		w.cmd.Process.Signal(syscall.SIGTERM)
		if r := w.wait(); r.code != 0 || !strings.Contains(r.stdout, "drained") {
			t.Errorf("worker after SIGTERM: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	if !strings.Contains(a.stdout.String(), "its lease was lost") {
		t.Errorf("the woken worker did not say it lost its leases:\n%s", a.stdout)
	}
	all, _ := db.Runs(ctx, "")
	for _, r := range all {
		if r.Outcome != "passed" {
			t.Errorf("run %s in %s: %s %s", r.ID, r.Workspace, r.Status, r.Outcome)
		}
	}
	for _, ws := range wss {
		if got := readFile(t, filepath.Join(ws, "out.txt")); got != "hi\n" {
			t.Errorf("%s/out.txt = %q", ws, got)
		}
		checkEffects(t, ctx, db, ws)
		checkOneDriver(t, url, ws)
	}
}
