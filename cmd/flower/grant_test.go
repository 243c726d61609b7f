package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flower-run/flower/model/modeltest"
)

// TestAllowRulesListWhatRuns: allow rules in flower.yaml list the calls of
// their tool that run without asking (Claude Code's meaning); another call
// of that tool is asked, so in flower once (no one to ask) it is denied,
// while tools no allow rule names run as before.
func TestAllowRulesListWhatRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "flower.yaml"), "permissions:\n  allow: [\"Bash(echo:*)\"]\n")
	srv, env := fakeModelWith(t, modeltest.Script(
		bashTurn("echo listed > a"),
		bashTurn("touch b"),
		call("", "Write", map[string]any{"file_path": "c", "content": "free"}),
		modeltest.Turn{Text: "done"},
	))
	r := runFlower(t, dir, env, "once", "try the rules")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for name, want := range map[string]bool{"a": true, "b": false, "c": true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", name, err == nil, want)
		}
	}
	reqs := srv.Requests()
	rs := toolResults(reqs[2])
	wantIn(t, "touch b", rs[len(rs)-1], "not one the allow rules list for Bash", "there is no one to ask")
}

// TestGrantSurvivesACrash: the person allows a call "for this run"; flower
// is killed (SIGKILL) before the judge's turn; the wake that resumes the
// run, unattended, runs the judge's call under the same ask rule without
// asking (an ask would be a denial there, and the verdict would fail).
func TestGrantSurvivesACrash(t *testing.T) {
	t.Parallel()
	srv, env := fakeModel(t)
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "flower.yaml"), "permissions:\n  ask: [\"Bash(cat:*)\"]\n")
	tr := newTrap("judge", 1, syscall.SIGKILL)
	srv.onRequest(tr.onRequest)
	p := startFlower(t, dir, env, true, testTask)
	tr.arm(p)
	p.waitOutput("? " + askQuestion)
	if _, err := io.WriteString(p.stdin, "1\n"); err != nil {
		t.Fatal(err)
	}
	p.waitOutput("? Allow this Bash call: cat out.txt")
	if _, err := io.WriteString(p.stdin, "2\n"); err != nil { // allow for this run
		t.Fatal(err)
	}
	if r, sig := p.ended(); sig != syscall.SIGKILL {
		t.Fatalf("flower was not killed at the judge (signal %v)\n%s%s", sig, r.stdout, r.stderr)
	}
	srv.onRequest(nil)
	r := runFlower(t, dir, env, unattended...)
	if r.code != 0 {
		t.Fatalf("the resumed wake: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "Allow this Bash call") {
		t.Errorf("the resumed run asked again for what was allowed for the run:\n%s", r.stdout)
	}
	judge := ofStep(srv.Requests(), "judge")
	if got := toolResults(judge[len(judge)-1]); len(got) == 0 || strings.TrimSpace(got[0]) != "hi" {
		t.Errorf("the judge's cat out.txt gave %q, want hi", got)
	}
}
