package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow/starter"
)

// Issue 22: no seam left. Real flower processes, killed by SIGKILL at a
// failpoint, then woken by a bare flower.

// crashPhrase is the phrase typed on the wake that is killed.
const crashPhrase = "also write PHRASE-22"

// TestCrashKeepsThePhrase: a run is cut in its work step; the person types
// flower "also ..." and that process is killed while it finishes the cut
// run, before the phrase has a run of its own. The bare wake after it must
// still add the phrase: in the brief, in the goals step's prompt, in the
// request after (issue 22 item 1, R3.9, R3.1).
func TestCrashKeepsThePhrase(t *testing.T) {
	t.Parallel()
	c := newCrashRun(t, crashFlow{bash: crashEcho}, config.Retry)
	c.crashed(c.killAtRequest(7)) // the work step, after its Bash echo
	cut := c.state().Run
	// The cut run goes on: its Edit's intent is the first after-intent hit.
	p := c.start([]string{crashPhrase}, fmt.Sprintf("%s=after-intent:1", failpoint.Env))
	if r, sig := p.ended(); sig != syscall.SIGKILL {
		t.Fatalf("the phrase wake was not killed (exit %d)\n%s%s", r.code, r.stdout, r.stderr)
	}
	if brief := readFile(t, filepath.Join(c.dir, starter.BriefPath)); strings.Contains(brief, "PHRASE-22") {
		t.Fatalf("the phrase reached the brief before the cut run ended: the kill came too late\n%s", brief)
	}
	from := c.srv.Count()
	c.wake()
	if brief := readFile(t, filepath.Join(c.dir, starter.BriefPath)); !strings.Contains(brief, "PHRASE-22") {
		t.Errorf("the brief lacks the phrase after the wake:\n%s", brief)
	}
	runs := runsOf(t, c.runDir())
	if len(runs) != 2 || runs[0].ID != cut || runs[0].Status != store.RunFinished ||
		runs[1].Phrase != crashPhrase || runs[1].Status != store.RunFinished || runs[1].Outcome != "passed" {
		t.Fatalf("runs after the wake: %+v", runs)
	}
	// The first request that carries the phrase is the goals step's
	// prompt; the work step's next request carries it too.
	var saw []string
	for _, r := range c.srv.Requests()[from:] {
		for _, text := range userTexts(r) {
			if strings.Contains(text, "PHRASE-22") {
				saw = append(saw, crashStepOf(r.System))
				break
			}
		}
	}
	if len(saw) < 2 || saw[0] != "goals" || saw[1] != "work" {
		t.Errorf("steps of the requests that carry the phrase: %v; want goals, work, ...", saw)
	}
	if got := readCrashFiles(t, c.dir); got.Log != 1 || got.Notes != "two\n" {
		t.Errorf("workspace %+v: every effect once", got)
	}
}
