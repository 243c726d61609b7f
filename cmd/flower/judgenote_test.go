package main

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/workflow/starter"
)

// TestNoteDuringTheJudgeReachesTheNextWorkRound: the judge takes no mail;
// a note typed while it works waits, and the work round after its failed
// verdict gets it without calling inbox; the brief has it too (R10.3).
func TestNoteDuringTheJudgeReachesTheNextWorkRound(t *testing.T) {
	t.Parallel()
	srv, env := fakeModelWith(t, playStrict)
	held := make(chan struct{})
	var once, released sync.Once
	release := func() { released.Do(func() { close(held) }) }
	t.Cleanup(release)
	srv.onRequest(func(r *modeltest.Request) {
		if stepOf(r.System) == "judge" {
			once.Do(func() { <-held })
		}
	})
	dir := t.TempDir()
	p := startFlower(t, dir, env, true, args(testTask)...)
	p.waitOutput("judge round 1")
	if _, err := p.stdin.Write([]byte("also check the README\n")); err != nil {
		t.Fatal(err)
	}
	p.waitOutput("✉ noted")
	release()
	r := p.wait()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var judged, worked int
	for _, req := range srv.Requests() {
		n := strings.Count(delivered(req), "also check the README")
		switch stepOf(req.System) {
		case "judge":
			judged += n
		case "work":
			worked = max(worked, n)
		}
	}
	if judged != 0 || worked != 1 {
		t.Errorf("the note reached the judge %d times and the work round %d times; want 0 and once", judged, worked)
	}
	if brief := readFile(t, filepath.Join(dir, starter.BriefPath)); !strings.Contains(brief, "also check the README") {
		t.Errorf("brief.md lacks the note:\n%s", brief)
	}
}
