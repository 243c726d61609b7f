package main

import (
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

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
	r := flower(t, dir, env, unattended...)
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
