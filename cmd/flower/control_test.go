package main

// Run control with real processes (issue 9): flower ps, flower --no-restore,
// flower --run ID and flower discard ID against the real binary and the
// fake Anthropic server of wake_helpers_test.go. Every wait is on a process
// exit, a pipe or the fake's requests; nothing sleeps.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/workflow"
)

// killedInWork runs the starter flow and kills flower with SIGKILL at the
// work step's third request (out.txt written, not yet checked): the run is
// left in flight, brief and goals done. It returns the cut run's id.
func killedInWork(t *testing.T) (dir string, srv *fake, env []string, cut string) {
	t.Helper()
	srv, env = fakeModel(t)
	tr := newTrap("work", 3, syscall.SIGKILL)
	srv.onRequest(tr.onRequest)
	dir = t.TempDir()
	p := startFlower(t, dir, env, false, args(testTask)...)
	tr.arm(p)
	if r := p.wait(); p.signal() != syscall.SIGKILL {
		t.Fatalf("flower was not killed (exit %d)\n%s%s", r.code, r.stdout, r.stderr)
	}
	srv.onRequest(nil)
	runs := runsOf(t, filepath.Join(dir, "runs"))
	if len(runs) != 1 || runs[0].Status != store.RunInFlight {
		t.Fatalf("after the kill the store holds %+v, want one run in flight", runs)
	}
	return dir, srv, env, runs[0].ID
}

// psLine is a run's line in flower ps: its id, its status, then the rest.
func psLine(out, id string) (status string, ok bool) {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(id) + `  (\S+) `).FindStringSubmatch(out)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// ps runs flower ps with args and fails the test unless it exits 0 with
// nothing on stderr.
func ps(t *testing.T, dir string, args ...string) string {
	t.Helper()
	r := runFlower(t, dir, nil, append([]string{"ps"}, args...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("flower ps %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// oneLineUsage checks that a command failed as a usage error: exit 2, one
// line on stderr holding want, no stack trace.
func oneLineUsage(t *testing.T, what string, r ran, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if r.code != exitUsage || len(lines) != 1 || !strings.Contains(r.stderr, want) ||
		strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "panic") {
		t.Errorf("%s: exit %d, want 2 and one line with %q\nstdout:\n%s\nstderr:\n%s", what, r.code, want, r.stdout, r.stderr)
	}
}

// rowsOf keeps the manifest rows of one run.
func rowsOf(rows []workflow.Row, run string) []workflow.Row {
	var out []workflow.Row
	for _, r := range rows {
		if r.Run == run {
			out = append(out, r)
		}
	}
	return out
}

// TestNoRestoreLeavesTheCutRunInFlight: after kill -9, a bare
// flower --no-restore starts a new run and leaves the cut one in flight,
// listed by ps; flower --run ID finishes it later where it stopped, without
// running its completed steps again.
func TestNoRestoreLeavesTheCutRunInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("three flower runs: skipped with -short")
	}
	t.Parallel()
	dir, srv, env, cut := killedInWork(t)
	runDir := filepath.Join(dir, "runs")

	r := runFlower(t, dir, env, args("--no-restore")...)
	if r.code != 0 || !strings.Contains(r.stdout, "✓ verdict passed") {
		t.Fatalf("flower --no-restore: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "finishing run") {
		t.Errorf("flower --no-restore finished the cut run:\n%s", r.stdout)
	}
	runs := runsOf(t, runDir)
	if len(runs) != 2 || runs[0].ID != cut {
		t.Fatalf("runs after --no-restore: %+v, want the cut one and a new one", runs)
	}
	fresh := runs[1]
	if runs[0].Status != store.RunInFlight || fresh.Status != store.RunFinished || fresh.Outcome != "passed" {
		t.Fatalf("after --no-restore: cut run %s %s, new run %s %s %s; want the cut one still in flight, the new one passed",
			cut, runs[0].Status, fresh.ID, fresh.Status, fresh.Outcome)
	}

	out := ps(t, dir)
	if st, ok := psLine(out, cut); !ok || st != string(store.RunInFlight) {
		t.Errorf("flower ps does not list the cut run %s in flight:\n%s", cut, out)
	}
	if _, ok := psLine(out, fresh.ID); ok {
		t.Errorf("flower ps lists the finished run %s:\n%s", fresh.ID, out)
	}
	if !strings.Contains(out, "driven by nobody") {
		t.Errorf("flower ps shows the cut run driven:\n%s", out)
	}
	out = ps(t, dir, "--all")
	for id, want := range map[string]string{cut: string(store.RunInFlight), fresh.ID: "passed"} {
		if st, ok := psLine(out, id); !ok || st != want {
			t.Errorf("flower ps --all shows run %s as %q, want %q:\n%s", id, st, want, out)
		}
	}

	before := srv.Count()
	r = runFlower(t, dir, env, args("--run", cut)...)
	if r.code != 0 || !strings.Contains(r.stdout, "finishing run "+cut) || !strings.Contains(r.stdout, "✓ verdict passed · run "+cut) {
		t.Fatalf("flower --run %s: exit %d\n%s%s", cut, r.code, r.stdout, r.stderr)
	}
	wake := srv.Requests()[before:]
	if n := len(ofStep(wake, "clarify")) + len(ofStep(wake, "goals")); n != 0 {
		t.Errorf("flower --run sent %d clarify/goals requests: completed steps ran again", n)
	}
	// The cut work step goes on in the thread's work session, which the
	// --no-restore run has since ended: nothing is left to ask there, and
	// the judge checks the work.
	if len(ofStep(wake, "judge")) == 0 {
		t.Errorf("flower --run did not judge the cut run: %d requests\n%s", len(wake), r.stdout)
	}
	got := rowsOf(readManifest(t, runDir), cut)
	if names := rowNames(got); !slices.Equal(names, []string{"clarify", "goals", "work", "work·judge#1"}) {
		t.Fatalf("the cut run's manifest rows: %v", names)
	}
	for _, row := range got {
		if !row.OK || row.SessionID == "" || row.EndedAt.IsZero() || row.Error != "" {
			t.Errorf("the cut run's row is not complete: %+v", row)
		}
	}
	if st, ok := psLine(ps(t, dir, "--all"), cut); !ok || st != "passed" {
		t.Errorf("after --run, ps --all shows %s as %q, want passed", cut, st)
	}
	if out := ps(t, dir); !strings.Contains(out, "no runs in flight") {
		t.Errorf("flower ps after both runs finished:\n%s", out)
	}
}

// TestDiscard abandons a cut run: ps no longer lists it, ps --all shows
// it discarded, and a bare wake starts a new run instead of finishing it.
// Unknown ids and a second discard are one-line usage errors.
func TestDiscard(t *testing.T) {
	t.Parallel()
	dir, _, env, cut := killedInWork(t)
	runDir := filepath.Join(dir, "runs")

	cutRows := rowNames(rowsOf(readManifest(t, runDir), cut))
	r := runFlower(t, dir, nil, "discard", cut)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "discarded "+cut {
		t.Fatalf("flower discard: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if out := ps(t, dir); strings.Contains(out, cut) || !strings.Contains(out, "no runs in flight") {
		t.Errorf("flower ps lists the discarded run:\n%s", out)
	}
	if st, ok := psLine(ps(t, dir, "--all"), cut); !ok || st != string(store.RunDiscarded) {
		t.Errorf("flower ps --all shows %s as %q, want discarded", cut, st)
	}
	oneLineUsage(t, "discard twice", runFlower(t, dir, nil, "discard", cut), "not in flight")
	oneLineUsage(t, "discard an unknown id", runFlower(t, dir, nil, "discard", "NOPE"), "no run NOPE")
	oneLineUsage(t, "discard without a store", runFlower(t, t.TempDir(), nil, "discard", "NOPE"), "no run NOPE")

	r = runFlower(t, dir, env, args()...)
	if r.code != 0 || strings.Contains(r.stdout, "finishing run") {
		t.Fatalf("the bare wake after discard: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	runs := runsOf(t, runDir)
	if len(runs) != 2 || runs[0].ID != cut || runs[0].Status != store.RunDiscarded ||
		runs[1].Status != store.RunFinished || runs[1].Outcome != "passed" {
		t.Fatalf("runs after the wake: %+v, want %s discarded and a new one passed", runs, cut)
	}
	if got := rowNames(rowsOf(readManifest(t, runDir), cut)); !slices.Equal(got, cutRows) {
		t.Errorf("the discarded run's rows changed: %v, were %v", got, cutRows)
	}
}

// TestRunUnknownIsAUsageError: flower --run with an id that names no run
// in flight is one line that points at flower ps, and writes nothing.
func TestRunUnknownIsAUsageError(t *testing.T) {
	t.Parallel()
	f := oneRun(t)
	before := snapshot(t, f.dir)
	oneLineUsage(t, "--run NOPE", runFlower(t, f.dir, nil, args("--run", "NOPE")...), "flower ps")
	// The finished run is no run in flight either.
	oneLineUsage(t, "--run FINISHED", runFlower(t, f.dir, nil, args("--run", newestRun(t, filepath.Join(f.dir, "runs")).ID)...), "flower ps")
	assertSameFiles(t, before, snapshot(t, f.dir))

	empty := t.TempDir()
	before = snapshot(t, empty)
	oneLineUsage(t, "--run NOPE without a run dir", runFlower(t, empty, nil, args("--run", "NOPE")...), "flower ps")
	assertSameFiles(t, before, snapshot(t, empty))
}

// TestBareWakeAfterPassedRunPaysNothing: the newest run passed and nothing
// new was typed: a bare flower says so, exits 0 and asks the model nothing.
func TestBareWakeAfterPassedRunPaysNothing(t *testing.T) {
	t.Parallel()
	dir, srv, env := startedRun(t)
	before, woke := srv.Count(), readLineage(t, dir).Woke
	r := runFlower(t, dir, env, args()...)
	if r.code != 0 || !regexp.MustCompile(`✓ run \S+ passed its verdict: nothing to continue`).MatchString(r.stdout) {
		t.Fatalf("bare wake after a passed run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := srv.Count() - before; n != 0 {
		t.Errorf("the bare wake made %d model requests, want 0", n)
	}
	if l := readLineage(t, dir); l.Woke != woke+1 {
		t.Errorf("woke %d after the bare wake, want %d: it ran nothing, but it was a wake (seed 000)", l.Woke, woke+1)
	}
	if runs := runsOf(t, filepath.Join(dir, "runs")); len(runs) != 1 {
		t.Errorf("%d runs after the bare wake, want 1: it starts none", len(runs))
	}
}

// TestReadOnlyCommandsWithoutARunDir: ps and status where no flower ran
// create nothing.
func TestReadOnlyCommandsWithoutARunDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	before := snapshot(t, dir)
	for _, a := range [][]string{{"ps"}, {"ps", "--all"}, {"status"}} {
		r := runFlower(t, dir, nil, a...)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("flower %v: exit %d\n%s%s", a, r.code, r.stdout, r.stderr)
		}
		if a[0] == "ps" && !strings.Contains(r.stdout, "no runs") {
			t.Errorf("flower %v: %q, want no runs", a, r.stdout)
		}
	}
	assertSameFiles(t, before, snapshot(t, dir))
}

// TestPsWhileAFlowerDrives: ps shows the run driven by the pid that holds
// it, and ps never gets in the way of a flower: many ps processes while
// one starts never make it fail with "run dir in use".
func TestPsWhileAFlowerDrives(t *testing.T) {
	t.Parallel()
	srv, env := fakeModel(t)
	held, release := make(chan struct{}), make(chan struct{})
	var holdOnce, releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // before the server closes
	srv.onRequest(func(r *modeltest.Request) {
		if stepOf(r.System) == "work" {
			holdOnce.Do(func() { close(held); <-release })
		}
	})
	dir := t.TempDir()
	a := startFlower(t, dir, env, false, args(testTask)...)
	select {
	case <-held: // a drives its run and waits for the answer of its first work request
	case <-a.done:
		t.Fatalf("flower ended early\n%s%s", a.stdout, a.stderr)
	}
	run := newestRun(t, filepath.Join(dir, "runs"))
	out := ps(t, dir)
	if !strings.Contains(out, run.ID) || !strings.Contains(out, fmt.Sprintf("driven by pid %d on ", a.cmd.Process.Pid)) {
		t.Errorf("flower ps while pid %d drives run %s:\n%s", a.cmd.Process.Pid, run.ID, out)
	}
	if r := runFlower(t, dir, nil, "status"); !strings.Contains(r.stdout, fmt.Sprintf("run        %s in flight at step work, driven by pid %d now", run.ID, a.cmd.Process.Pid)) {
		t.Errorf("flower status while pid %d drives:\n%s%s", a.cmd.Process.Pid, r.stdout, r.stderr)
	}
	if r := runFlower(t, dir, nil, "discard", run.ID); r.code == 0 || !strings.Contains(r.stderr, fmt.Sprintf("pid %d", a.cmd.Process.Pid)) {
		t.Errorf("flower discard of a driven run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runFlower(t, dir, nil, "--reset", "-y"); r.code != exitFailed || !strings.Contains(r.stderr, fmt.Sprintf("pid %d is driving", a.cmd.Process.Pid)) {
		t.Errorf("flower --reset while a flower drives: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	releaseOnce.Do(func() { close(release) })
	if r := a.wait(); r.code != 0 {
		t.Fatalf("the driving flower: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Many readers against a flower that starts (takes the lock, creates
	// the store, commits the run): it must never see the run dir in use.
	// A passed run makes the bare wake cheap; --no-restore makes it work.
	readers := 20
	if testing.Short() {
		readers = 6
	}
	var wg sync.WaitGroup
	results := make(chan ran, 2*readers)
	start := make(chan struct{})
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results <- psOff(dir, "--all")
		}()
	}
	dir2 := t.TempDir()
	for range readers { // and a workspace that has no run dir yet
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results <- psOff(dir2)
		}()
	}
	close(start)
	b := startFlower(t, dir, env, false, args("--no-restore")...)
	c := startFlower(t, dir2, env, false, args(testTask)...)
	wg.Wait()
	close(results)
	for r := range results {
		if r.code != 0 || strings.Contains(r.stderr, "in use") {
			t.Errorf("a flower ps beside a starting flower: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	for _, p := range []*proc{b, c} {
		if r := p.wait(); r.code != 0 || strings.Contains(r.stderr, "run dir in use") {
			t.Errorf("flower %v beside %d flower ps: exit %d\n%s%s", p.cmd.Args[1:], readers, r.code, r.stdout, r.stderr)
		}
	}
}

// TestDiscardWhileAFlowerStarts: a flower that holds the run dir but has
// not yet claimed the run it drives may be about to finish the cut run: a
// discard then is refused, naming it, instead of racing its commit of the
// run back in flight. The flower is held at its start by a state.json that
// is a FIFO: the import of an older flower's run state blocks on it, under
// the lock, before any run is picked.
func TestDiscardWhileAFlowerStarts(t *testing.T) {
	t.Parallel()
	dir, _, env, cut := killedInWork(t)
	runDir := filepath.Join(dir, "runs")
	fifo := filepath.Join(runDir, "state.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	a := startFlower(t, dir, env, false, args()...)
	crashPoll(t, "the starting flower's lock", a.done, func() bool { h, _ := sqlite.Dirs{}.Holder(context.Background(), runDir); return h.Live })
	r := runFlower(t, dir, nil, "discard", cut)
	if r.code != exitFailed || !strings.Contains(r.stderr, fmt.Sprintf("pid %d is starting", a.cmd.Process.Pid)) {
		t.Errorf("discard while a flower starts: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Let the import read an empty state.json: it is ignored, and the
	// flower finishes the cut run.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if r := a.wait(); r.code != 0 || !strings.Contains(r.stdout, "finishing run "+cut) {
		t.Fatalf("the flower after the refused discard: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if run := runsOf(t, runDir)[0]; run.ID != cut || run.Status != store.RunFinished || run.Outcome != "passed" {
		t.Errorf("the cut run after the wake: %+v, want it finished, passed", run)
	}
}

// TestReset abandons every run in flight, after confirmation, under the
// run dir's lock, which it gives back.
func TestReset(t *testing.T) {
	t.Parallel()
	dir, _, env, cut := killedInWork(t)
	if r := runFlower(t, dir, nil, "--reset"); r.code != exitFailed || !strings.Contains(r.stderr, "reset cancelled") {
		t.Errorf("--reset without a yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if st, _ := psLine(ps(t, dir), cut); st != string(store.RunInFlight) {
		t.Errorf("a cancelled reset discarded %s", cut)
	}
	r := runFlower(t, dir, nil, "--reset", "-y")
	if r.code != 0 || !strings.Contains(r.stdout, "discarded "+cut) || !strings.Contains(r.stdout, "in-flight state cleared") {
		t.Fatalf("--reset -y: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if st, _ := psLine(ps(t, dir, "--all"), cut); st != string(store.RunDiscarded) {
		t.Errorf("after --reset, ps --all shows %s as %q, want discarded", cut, st)
	}
	if h, _ := (sqlite.Dirs{}).Holder(context.Background(), filepath.Join(dir, "runs")); h.Live {
		t.Error("--reset left the run dir locked")
	}
	if r := runFlower(t, dir, env, args()...); r.code != 0 || strings.Contains(r.stdout, "finishing run") {
		t.Errorf("the wake after --reset: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	empty := t.TempDir()
	before := snapshot(t, empty)
	if r := runFlower(t, empty, nil, "--reset", "-y"); r.code != 0 {
		t.Errorf("--reset -y where no flower ran: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	assertSameFiles(t, before, snapshot(t, empty))
}

// psOff runs flower ps off the test's goroutine: it reports a failure to
// start in the result instead of calling t.Fatal.
func psOff(dir string, args ...string) ran {
	cmd := exec.Command(flowerBin, append([]string{"ps"}, args...)...)
	cmd.Dir = dir
	cmd.Env = baseEnv(dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := ran{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		r.code, r.stderr = -1, err.Error()
	}
	return r
}
