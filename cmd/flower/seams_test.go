package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow"
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

// TestCrashTellsTheModel: flower is killed after the work step's Bash echo
// ran and before its result was recorded. Under retry the wake runs it
// again and the result the model gets says so; under skip it is not run
// and the result says that. Every later request of the session shows the
// same stored note (issue 22 item 4, R5.4).
func TestCrashTellsTheModel(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		policy config.Policy
		says   string
	}{
		{config.Retry, "so it was run again (run 2 of at most 2)"},
		{config.Skip, `Under the resume policy "skip" it was not run again`},
	} {
		t.Run(string(tt.policy), func(t *testing.T) {
			t.Parallel()
			c := newCrashRun(t, crashFlow{bash: crashEcho}, tt.policy)
			c.crashed(nil, fmt.Sprintf("%s=after-effect:4", failpoint.Env)) // 4: work Bash echo
			from := c.srv.Count()
			c.wake()
			var notes []string
			for _, r := range ofStep(c.srv.Requests()[from:], "work") {
				for _, res := range toolResults(r) {
					if strings.Contains(res, "A crash stopped flower while this call (Bash "+crashEcho+")") {
						notes = append(notes, res)
					}
				}
			}
			if len(notes) < 2 {
				t.Fatalf("%d work requests after the wake carry the note on the Bash result, want every one (2)", len(notes))
			}
			if !strings.Contains(notes[0], tt.says) || !strings.Contains(notes[0], "Check what the command changes") {
				t.Errorf("the note says %q; want %q and how to check", notes[0], tt.says)
			}
			// The fake judge reads past the note (rerunOutput): it must know it.
			if tt.policy == config.Retry && strings.Contains(rerunOutput(notes[0]), "A crash stopped flower") {
				t.Errorf("rerunOutput leaves the note in place: %q", rerunOutput(notes[0]))
			}
			for _, n := range notes[1:] {
				if n != notes[0] {
					t.Errorf("a later request shows the note otherwise:\n%q\nfirst:\n%q", n, notes[0])
				}
			}
		})
	}
}

// TestWakeRewritesTheExports: after a passed run, manifest.json deleted
// and temp files that killed writes left (an export's, a new store's
// build, a note's) are put right by the next bare wake: the manifest
// again with every row, the temp files gone (issue 22 item 5).
func TestWakeRewritesTheExports(t *testing.T) {
	t.Parallel()
	c := newCrashRun(t, crashFlow{bash: crashEcho}, config.Retry)
	if r, _ := c.start([]string{crashTask}).ended(); r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	manifest := filepath.Join(c.runDir(), workflow.ManifestFile)
	before := readFile(t, manifest)
	if len(readManifest(t, c.runDir())) < 4 {
		t.Fatalf("manifest after the run:\n%s", before)
	}
	if err := os.Remove(manifest); err != nil {
		t.Fatal(err)
	}
	left := []string{filepath.Join(c.runDir(), ".manifest.json.4242.tmp"), filepath.Join(c.runDir(), "sessions.db.new-77"),
		filepath.Join(c.runDir(), "sessions.db.new-77-journal"), filepath.Join(c.dir, starter.WorkbenchDir, ".brief.md.99.tmp")}
	for _, p := range left {
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := c.wake()
	if !strings.Contains(r.stdout, "passed its verdict") {
		t.Fatalf("the wake after the pass did more than pass:\n%s", r.stdout)
	}
	if got := readFile(t, manifest); got != before {
		t.Errorf("manifest.json after the wake:\n%s\nwant, as before it was deleted:\n%s", got, before)
	}
	for _, p := range left {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there after the wake", p)
		}
	}
}

// TestWakeRefusesADamagedStore: flower is killed in the judge step, with
// the run's commits in the WAL; a byte of the WAL's first frame flips.
// SQLite then drops that frame and every later one, silently: the store
// opens, holding less than it had committed. The next wake must refuse in
// one line naming the fix, and run nothing (issue 22 item 2).
func TestWakeRefusesADamagedStore(t *testing.T) {
	t.Parallel()
	c := newCrashRun(t, crashFlow{bash: crashEcho}, config.Retry)
	c.crashed(c.killAtRequest(10)) // the judge's second request
	wal := filepath.Join(c.runDir(), "sessions.db-wal")
	data, err := os.ReadFile(wal)
	const header, frame = 32, 24 // the WAL's header, a frame's header
	if err != nil || len(data) < header+2*(frame+4096) {
		t.Fatalf("no WAL with frames after the kill (%d bytes): %v", len(data), err)
	}
	data[header+frame+100] ^= 0x40
	if err := os.WriteFile(wal, data, 0o600); err != nil {
		t.Fatal(err)
	}
	files, requests := readCrashFiles(t, c.dir), c.srv.Count()
	r, _ := c.start(nil).ended()
	if r.code == 0 || !strings.Contains(r.stderr, "lost records it had committed") ||
		!strings.Contains(r.stderr, "flower --reset") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("the wake on the damaged store: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got := readCrashFiles(t, c.dir); got != files || c.srv.Count() != requests {
		t.Errorf("the refused wake ran something: workspace %+v (was %+v), %d requests (was %d)", got, files, c.srv.Count(), requests)
	}
}
