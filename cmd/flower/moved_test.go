package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/project"
	"github.com/flower-run/flower/workflow"
)

// Issue 22 item 3: a project that moves after a crash is found. The run
// dir is flower's default, under the state directory and named by the
// path (not ./runs, which would move with the workspace).

// movedFlow plays the starter flow of the crash suite (crashFlow) with a
// work step of three effects, each one Bash line appending to ops.log,
// and a judge that only gives its verdict:
//
//	clarify, goals: as crashFlow                              4 requests
//	work: echo one → echo two → echo three → end              4 (5-8)
//	judge: verdict(pass) → end                                2
func movedFlow(r *modeltest.Request) modeltest.Turn {
	_, n := crashSeen(r.Messages)
	switch crashStepOf(r.System) {
	case "work":
		if words := []string{"one", "two", "three"}; n < len(words) {
			return crashCall("Logging.", "Bash", map[string]any{"command": "echo " + words[n] + " >> ops.log"})
		}
		return modeltest.Turn{Text: "Done."}
	case "judge":
		if n == 0 {
			return crashCall("", workflow.VerdictName, map[string]any{"pass": true, "findings": "looked"})
		}
		return modeltest.Turn{Text: "Verdict given."}
	}
	return crashFlow{}.respond(r)
}

// movedRun is a crashRun whose workspace sits in a parent directory of
// its own, so it can be renamed, and whose state is in the default run
// dir under a state directory of its own.
func movedRun(t *testing.T) *crashRun {
	t.Helper()
	c := &crashRun{t: t, dir: filepath.Join(t.TempDir(), "project")}
	if err := os.Mkdir(c.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c.srv, c.env = fakeModelWith(t, movedFlow)
	c.env = append(c.env, "XDG_STATE_HOME="+t.TempDir(), runDirEnv+"=")
	return c
}

// TestMovedProjectContinues: the run is SIGKILLed in its work step after
// the second of three effects; the workspace directory is renamed; a bare
// flower in the new path continues the cut step in its session: ops.log
// ends one two three, and the first request after the wake carries the
// session as the cut request did (issue 22 "Done when").
func TestMovedProjectContinues(t *testing.T) {
	t.Parallel()
	c := movedRun(t)
	c.crashed(c.killAtRequest(7)) // work: echo one and two ran and are stored
	if got := readFile(t, filepath.Join(c.dir, "ops.log")); got != "one\ntwo\n" {
		t.Fatalf("ops.log before the move = %q, want one two", got)
	}
	cut := c.srv.Requests()[6]
	moved := filepath.Join(filepath.Dir(c.dir), "renamed")
	if err := os.Rename(c.dir, moved); err != nil {
		t.Fatal(err)
	}
	c.dir = moved
	r := c.wake()
	if !strings.Contains(r.stdout+r.stderr, "moved here from") {
		t.Errorf("no notice of the adoption:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if got := readFile(t, filepath.Join(moved, "ops.log")); got != "one\ntwo\nthree\n" {
		t.Errorf("ops.log after the wake in the new path = %q, want one two three: each effect once", got)
	}
	after := c.srv.Requests()[7:]
	if len(after) == 0 || crashStepOf(after[0].System) != "work" || !continues(t, cut, after[0]) {
		t.Fatalf("the first request after the wake is not the cut work session's: %d requests after, first of step %q",
			len(after), crashStepOf(after[0].System))
	}
	for _, req := range after {
		if step := crashStepOf(req.System); step == "clarify" || step == "goals" {
			t.Errorf("request %d after the wake is of step %s, done before the crash", req.N, step)
		}
	}
	if got := runDirOf(t, c); len(runsOf(t, got)) != 1 {
		t.Errorf("runs in %s: want the one cut run, finished", got)
	}
}

// runDirOf is the run dir the project index binds c's workspace to.
func runDirOf(t *testing.T, c *crashRun) string {
	t.Helper()
	home := ""
	for _, kv := range c.env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			home = v
		}
	}
	dir, ok := project.IndexIn(home).RunDir(c.dir)
	if !ok {
		t.Fatalf("the project index binds no run dir to %s", c.dir)
	}
	return dir
}

// TestCopiedProjectStartsAnew: a copy of a project, the original still in
// place, gets an id and state of its own, with a notice; the original
// keeps its state and its id.
func TestCopiedProjectStartsAnew(t *testing.T) {
	t.Parallel()
	c := movedRun(t)
	if r, _ := c.start([]string{crashTask}).ended(); r.code != 0 {
		t.Fatalf("the first run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	orig, origDir := c.dir, runDirOf(t, c)
	id, err := project.ReadID(orig)
	if err != nil || id == "" {
		t.Fatalf("no project id after the first run: %q, %v", id, err)
	}
	cp := filepath.Join(filepath.Dir(orig), "copy")
	if out, err := exec.Command("cp", "-a", orig, cp).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	c.dir = cp
	r, _ := c.start([]string{"another task"}).ended()
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "is a copy of") {
		t.Errorf("the copy's run: exit %d, want 0 and a notice that it is a copy\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got, _ := project.ReadID(cp); got == id || got == "" {
		t.Errorf("the copy's id = %q, want a new one (the original's is %s)", got, id)
	}
	if got, _ := project.ReadID(orig); got != id {
		t.Errorf("the original's id = %q, want %s still", got, id)
	}
	if copyDir := runDirOf(t, c); copyDir == origDir {
		t.Errorf("the copy uses the original's run dir %s", origDir)
	}
	if runs := runsOf(t, origDir); len(runs) != 1 || runs[0].Workspace != orig {
		t.Errorf("the original's runs after the copy's run: %+v, want its one run, of %s", runs, orig)
	}
}

// TestDoctor: after a run, flower doctor finds every check fine and
// exits 0; a temp file a killed write left is one line naming it and the
// fix, and exit 1 (issue 22 item 2).
func TestDoctor(t *testing.T) {
	t.Parallel()
	c := movedRun(t)
	if r, _ := c.start([]string{crashTask}).ended(); r.code != 0 {
		t.Fatalf("the run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	doctor := func() ran {
		r, _ := c.start([]string{"doctor"}).ended()
		return r
	}
	r := doctor()
	for _, check := range []string{"store", "quick_check", "high-water", "temp files", "project id"} {
		if !strings.Contains(r.stdout, "ok "+check) {
			t.Errorf("doctor lacks \"ok %s\":\n%s", check, r.stdout)
		}
	}
	if r.code != 0 || strings.Count(r.stdout, "\n") != 5 {
		t.Fatalf("doctor after a run: exit %d, want 0 and 5 lines\n%s%s", r.code, r.stdout, r.stderr)
	}
	left := filepath.Join(runDirOf(t, c), ".lineage.json.4242.tmp")
	if err := os.WriteFile(left, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = doctor()
	if r.code != 1 || !strings.Contains(r.stdout, "!! temp files") || !strings.Contains(r.stdout, ".lineage.json.4242.tmp") ||
		!strings.Contains(r.stdout, "the next flower start here removes them") {
		t.Errorf("doctor with a temp file left: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
