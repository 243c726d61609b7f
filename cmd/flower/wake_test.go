package main

// Issue 3, "Workflows that continue across processes": the real flower
// binary against a fake Anthropic server playing the starter flow (see
// play). Crashes are real: the fake kills the child when it sees a given
// request, before answering it. Nothing here sleeps; every wait is on a
// process exit, a pipe or the fake's requests.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/workflow"
	"github.com/flower-run/flower/workflow/starter"
)

// unattended answers every ask at once, so runs without a person never
// block (R6.4).
var unattended = []string{"--timeout", "0"}

func args(extra ...string) []string { return append(slices.Clone(unattended), extra...) }

// finished is one uninterrupted starter run, shared by the tests that only
// read it: it is also the baseline the crash tests compare against.
type finished struct {
	dir  string
	out  ran
	reqs []*modeltest.Request
}

var (
	finishedOnce sync.Once
	finishedRun  finished
)

// oneRun runs the starter flow once, uninterrupted. Callers must not
// change its directory.
func oneRun(t *testing.T) finished {
	t.Helper()
	finishedOnce.Do(func() {
		srv := modeltest.NewAnthropic(play)
		defer srv.Close()
		dir, err := os.MkdirTemp(filepath.Dir(flowerBin), "finished") // removed with the binary
		if err != nil {
			t.Fatal(err)
		}
		env := []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=test"}
		finishedRun = finished{dir: dir, out: runFlower(t, dir, env, args(testTask)...), reqs: srv.Requests()}
	})
	if finishedRun.dir == "" || finishedRun.out.code != 0 {
		t.Fatalf("the shared starter run failed: exit %d\n%s\n%s", finishedRun.out.code, finishedRun.out.stdout, finishedRun.out.stderr)
	}
	return finishedRun
}

// TestStarterRunPasses checks what a passed starter run leaves: lineage,
// manifest, brief and goals.
func TestStarterRunPasses(t *testing.T) { // R3.2, R3.4, R3.12, R3.15
	t.Parallel()
	f := oneRun(t)
	if len(f.reqs) != perRun {
		t.Fatalf("%d model requests, want %d", len(f.reqs), perRun)
	}
	for _, want := range []string{"-> starting in", "── 1/4 clarify (new session)", "── 2/4 goals (new session)",
		"── 3/4 work (new session)", "── 4/4 judge round 1 (fresh eyes)", "✓ verdict passed"} {
		if !strings.Contains(f.out.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, f.out.stdout)
		}
	}

	// R3.2: plain step names only, never the judge.
	l := readLineage(t, f.dir)
	if l.Workspace != f.dir || l.Woke != 1 {
		t.Errorf("lineage workspace %q woke %d, want %q 1", l.Workspace, l.Woke, f.dir)
	}
	if got := mapKeys(l.Steps); !slices.Equal(got, []string{"clarify", "goals", "work"}) {
		t.Errorf("lineage steps %v, want clarify goals work", got)
	}

	// R3.4: one row per step attempt, every result field, duration and run.
	rows := readManifest(t, filepath.Join(f.dir, "runs"))
	if got := rowNames(rows); !slices.Equal(got, []string{"clarify", "goals", "work", "work·judge#1"}) {
		t.Fatalf("manifest rows %v", got)
	}
	for _, r := range rows {
		if !r.OK || r.Run != rows[0].Run || r.SessionID == "" || r.NumTurns == 0 || r.DurationS <= 0 || r.StartedAt.IsZero() {
			t.Errorf("row %+v", r)
		}
		if id, ok := l.Steps[r.Step]; ok && id != r.SessionID {
			t.Errorf("row %s session %s, lineage %s", r.Step, r.SessionID, id)
		}
	}
	if judge := rows[3].SessionID; slices.Contains(mapValues(l.Steps), judge) {
		t.Errorf("the judge's session %s entered the lineage (R3.2, R3.8)", judge)
	}

	// R3.15: the brief's four sections, the goals' checks.
	brief := starter.ParseBrief(readFile(t, filepath.Join(f.dir, starter.BriefPath)))
	if !brief.Complete() || !strings.Contains(brief.Sections["Goal"], testTask) {
		t.Errorf("brief.md:\n%s", brief.Text)
	}
	if n := starter.CountChecks(readFile(t, filepath.Join(f.dir, starter.GoalsPath))); n != 3 {
		t.Errorf("goals.md has %d checks, want 3", n)
	}

	// R3.15 least privilege: each step is offered only its tools.
	for step, want := range map[string][]string{"clarify": starter.ClarifyTools, "goals": starter.GoalsTools,
		"work": starter.WorkTools, "judge": starter.JudgeTools} {
		for _, r := range ofStep(f.reqs, step) {
			// mcp__* offers nothing here: no .mcp.json (mcptools_test.go has one).
			w := slices.DeleteFunc(slices.Clone(want), func(n string) bool { return n == starter.MCPTools })
			if got, w := sorted(r.Tools), sorted(w); !slices.Equal(got, w) {
				t.Errorf("%s was offered %v, want %v", step, got, w)
				break
			}
		}
		if first := ofStep(f.reqs, step)[0]; len(first.Messages) != 1 {
			t.Errorf("the first %s request has %d messages: a new session starts with the prompt alone", step, len(first.Messages))
		}
	}
}

func TestUnattendedAskSettlesAtOnce(t *testing.T) { // R6.3, R6.4
	t.Parallel()
	f := oneRun(t)
	clarify := ofStep(f.reqs, "clarify")
	if res := toolResults(clarify[1]); len(res) != 1 || res[0] != human.TimeoutText {
		t.Fatalf("after the ask the model got %q, want the fixed unattended text", res)
	}
	qa := readFile(t, filepath.Join(f.dir, starter.QAPath))
	if !strings.Contains(qa, askQuestion) || !strings.Contains(qa, "State: timeout") {
		t.Fatalf("qa.md:\n%s", qa)
	}
}

func TestStatusWritesNothing(t *testing.T) { // R3.6, SPEC §7 flower status
	t.Parallel()
	f := oneRun(t)
	before := snapshot(t, f.dir)
	r := runFlower(t, f.dir, nil, "status")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	l := readLineage(t, f.dir)
	for _, want := range []string{"wakes      1", "brief      confirmed", "goals      3 checks", "goal       Deliver: " + testTask,
		"last run   " + newestRun(t, filepath.Join(f.dir, "runs")).ID + " passed · $", "verdict    cat out.txt printed: hi",
		"step       work     session " + l.Steps["work"], "step       clarify  session " + l.Steps["clarify"]} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
	assertSameFiles(t, before, snapshot(t, f.dir))

	empty := t.TempDir()
	before = snapshot(t, empty)
	r = runFlower(t, empty, nil, "status")
	if r.code != 0 || !strings.Contains(r.stdout, "nothing to continue") {
		t.Fatalf("status in an empty dir: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A bare wake there says the same, as a usage error, and creates nothing.
	r = runFlower(t, empty, nil)
	if r.code != 2 || !strings.Contains(r.stderr, "nothing to continue") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("bare wake in an empty dir: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	assertSameFiles(t, before, snapshot(t, empty))
}

func assertSameFiles(t *testing.T, before, after map[string]fileInfo) {
	t.Helper()
	for p, fi := range after {
		if was, ok := before[p]; !ok {
			t.Errorf("%s was created", p)
		} else if was != fi {
			t.Errorf("%s changed: %+v -> %+v", p, was, fi)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s was removed", p)
		}
	}
}

// TestKill9MidStep kills flower with SIGKILL while the fake holds a request
// of each step, then wakes it bare: the cut run finishes where it stopped,
// connected to the same sessions, and the only request paid twice is the
// one that was never answered (R3.1, R3.2, R3.7, R3.10, R5.3).
func TestKill9MidStep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		step  string
		n     int  // the request of the step the kill comes at
		heavy bool // skipped with -short
	}{
		{"clarify", 2, false}, // after the ask was answered
		{"clarify", 1, true},  // before the session is known: the task must survive
		{"goals", 2, true},
		{"goals", 3, true}, // goals.md written, the step not yet ended
		{"work", 3, false}, // out.txt written, not yet checked
		{"judge", 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.step+"@"+string(rune('0'+tt.n)), func(t *testing.T) {
			if tt.heavy && testing.Short() {
				t.Skip("crash case skipped with -short")
			}
			t.Parallel()
			srv, env := fakeModel(t)
			tr := newTrap(tt.step, tt.n, syscall.SIGKILL)
			srv.onRequest(tr.onRequest)
			dir := t.TempDir()
			p := startFlower(t, dir, env, false, args(testTask)...)
			tr.arm(p)
			first := p.wait()
			if p.signal() != syscall.SIGKILL {
				t.Fatalf("flower was not killed (exit %d)\n%s%s", first.code, first.stdout, first.stderr)
			}
			cut := readLineage(t, dir)
			if _, ok := cut.Steps[tt.step]; ok != (tt.step != "judge" && tt.n > 1) {
				t.Errorf("lineage at the kill: %v (written the moment a session is known, never the judge's, R3.2)", cut.Steps)
			}
			before := srv.Count()
			// R3.6: status tells what the wake will continue: the cut run.
			at := tt.step
			if at == "judge" {
				at = "work·judge#1" // its row: the judge is no step of the lineage
			}
			if s := runFlower(t, dir, nil, "status"); s.code != 0 || !strings.Contains(s.stdout, "in flight at step "+at+", cut") {
				t.Errorf("status after the kill: exit %d\n%s%s", s.code, s.stdout, s.stderr)
			}

			r := runFlower(t, dir, env, args()...)
			if r.code != 0 {
				t.Fatalf("the wake after kill -9: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if got, base := srv.Count(), len(oneRun(t).reqs); got != base+1 {
				t.Errorf("%d model requests over both processes, want %d (an uninterrupted run's %d + the one cut)", got, base+1, base)
			}
			after := readLineage(t, dir)
			for step, id := range cut.Steps {
				if after.Steps[step] != id {
					t.Errorf("step %s: session %s after the wake, %s before: not connected", step, after.Steps[step], id)
				}
			}
			if after.Woke != 2 {
				t.Errorf("woke %d, want 2", after.Woke)
			}
			rows := readManifest(t, filepath.Join(dir, "runs"))
			if got := rowNames(rows); !slices.Equal(got, []string{"clarify", "goals", "work", "work·judge#1"}) {
				t.Errorf("manifest rows %v: each step once, accumulated across both processes (R3.4)", got)
			}
			for _, row := range rows {
				if !row.OK || row.Run != rows[0].Run {
					t.Errorf("row %s ok=%v run %s, want ok in run %s (the wake finishes the cut run)", row.Step, row.OK, row.Run, rows[0].Run)
				}
			}

			// The cut request is asked again with everything it carried:
			// the step continued, it did not restart.
			resumed := ofStep(srv.Requests()[before:], tt.step)
			if len(resumed) == 0 {
				t.Fatalf("the wake sent no %s request: the cut step was skipped instead of finished\n%s", tt.step, r.stdout)
			}
			if !continues(t, tr.request(), resumed[0]) {
				t.Errorf("the first %s request after the wake does not carry the cut request's messages:\ncut:   %v\nafter: %v",
					tt.step, messagesJSON(t, tr.request().Messages), messagesJSON(t, resumed[0].Messages))
			}
			if tt.step == "clarify" && tt.n > 1 {
				if texts := userTexts(resumed[0]); texts[len(texts)-1] != starter.ClarifyCrashPrompt {
					t.Errorf("the cut clarification continued with %q, want the fixed crash prompt (R3.10)", texts[len(texts)-1])
				}
			}
			if tt.step != "judge" && !strings.Contains(r.stdout, tt.step+" (connected)") && tt.n > 1 {
				t.Errorf("the wake's %s header does not say connected:\n%s", tt.step, r.stdout)
			}
			brief := starter.ParseBrief(readFile(t, filepath.Join(dir, starter.BriefPath)))
			if !brief.Complete() || !strings.Contains(brief.Sections["Goal"], testTask) {
				t.Errorf("brief.md after the wake lost the task:\n%s", brief.Text)
			}
		})
	}
}

func TestSIGTERMDuringWork(t *testing.T) { // R3.7
	t.Parallel()
	srv, env := fakeModel(t)
	tr := newTrap("work", 2, syscall.SIGTERM)
	srv.onRequest(tr.onRequest)
	dir := t.TempDir()
	p := startFlower(t, dir, env, false, args(testTask)...)
	tr.arm(p)
	first := p.wait()
	if p.signal() != syscall.SIGTERM {
		t.Fatalf("flower did not exit by SIGTERM (exit %d)\n%s%s", first.code, first.stdout, first.stderr)
	}
	rows := readManifest(t, filepath.Join(dir, "runs"))
	last := rows[len(rows)-1]
	if last.Step != "work" || last.OK || last.Error != workflow.ErrKilledBySignal.Error() {
		t.Fatalf("the in-flight step's row: %+v, want work with error killed-by-signal", last)
	}
	l := readLineage(t, dir)
	if l.Steps["work"] == "" || l.Steps["work"] != last.SessionID {
		t.Fatalf("lineage %v, in-flight row session %s", l.Steps, last.SessionID)
	}

	r := runFlower(t, dir, env, args()...)
	if r.code != 0 {
		t.Fatalf("the wake after SIGTERM: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got, base := srv.Count(), len(oneRun(t).reqs); got != base+1 {
		t.Errorf("%d model requests, want %d (an uninterrupted run's %d + the one cut)", got, base+1, base)
	}
	if after := readLineage(t, dir); after.Steps["work"] != l.Steps["work"] {
		t.Errorf("work session %s after the wake, %s before", after.Steps["work"], l.Steps["work"])
	}
	rows = readManifest(t, filepath.Join(dir, "runs"))
	if got := rowNames(rows); !slices.Equal(got, []string{"clarify", "goals", "work", "work·judge#1"}) {
		t.Fatalf("manifest rows %v", got)
	}
	if rows[2].Error != "" || !rows[2].OK {
		t.Errorf("the work row after the wake: %+v", rows[2])
	}
}

// startedRun runs the starter flow once in a new directory of its own.
func startedRun(t *testing.T) (dir string, srv *fake, env []string) {
	t.Helper()
	srv, env = fakeModel(t)
	dir = t.TempDir()
	if r := runFlower(t, dir, env, args(testTask)...); r.code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return dir, srv, env
}

func TestBareWakeAfterFinishedRun(t *testing.T) { // R3.1, R3.5, R3.8, R3.9, R3.10, R3.11, R3.12
	t.Parallel()
	dir, srv, env := startedRun(t)
	brief := readFile(t, filepath.Join(dir, starter.BriefPath))
	goals := readFile(t, filepath.Join(dir, starter.GoalsPath))
	l1 := readLineage(t, dir)
	mark := []int{srv.Count()}
	var outs []ran
	// A bare wake after a passed run pays for nothing (issue 11); a new run
	// connected to the thread is asked for with --no-restore.
	if r := runFlower(t, dir, env, args()...); r.code != 0 || srv.Count() != mark[0] || !strings.Contains(r.stdout, "passed its verdict: nothing to continue") {
		t.Fatalf("a bare wake after a passed run: exit %d, %d model requests\n%s%s", r.code, srv.Count()-mark[0], r.stdout, r.stderr)
	}
	for wake := 2; wake <= 3; wake++ {
		r := runFlower(t, dir, env, args("--no-restore")...)
		if r.code != 0 {
			t.Fatalf("wake %d: exit %d\n%s%s", wake, r.code, r.stdout, r.stderr)
		}
		outs = append(outs, r)
		mark = append(mark, srv.Count())
	}
	if readFile(t, filepath.Join(dir, starter.BriefPath)) != brief || readFile(t, filepath.Join(dir, starter.GoalsPath)) != goals {
		t.Error("a bare wake changed brief.md or goals.md (R3.9)")
	}
	reqs := srv.Requests()
	wakes := reqs[mark[0]:]
	if n := len(ofStep(wakes, "clarify")) + len(ofStep(wakes, "goals")); n != 0 {
		t.Errorf("bare wakes sent %d clarify/goals requests: frozen steps cost nothing (R3.10)", n)
	}
	// The bare wake after the passed run counted as a wake (seed 000: woke),
	// so the first --no-restore wake is the thread's third.
	banner := regexp.MustCompile(`^<- continuing in \S+  brief confirmed · 3 goals · work context [0-9.]+K? · wake 3  · model \S+ · [^\n]+\n`)
	if !banner.MatchString(outs[0].stdout) {
		t.Errorf("wake 2 banner (R3.12):\n%s", outs[0].stdout)
	}
	for _, want := range []string{"1/4 clarify (frozen, skipped)", "2/4 goals (frozen, skipped)", "3/4 work (connected)"} {
		if !strings.Contains(outs[0].stdout, want) {
			t.Errorf("wake 2 lacks %q:\n%s", want, outs[0].stdout)
		}
	}
	l3 := readLineage(t, dir)
	if !mapsEqual(l1.Steps, l3.Steps) || l3.Woke != 4 {
		t.Errorf("lineage after a passed bare wake and two --no-restore wakes %+v, first %+v", l3, l1)
	}

	prev := ofStep(reqs[:mark[0]], "work")
	for i := range 2 {
		wake := reqs[mark[i]:mark[i+1]]
		work := ofStep(wake, "work")
		if len(work) == 0 || !continues(t, prev[len(prev)-1], work[0]) {
			t.Fatalf("wake %d: the work step did not continue its session with its history (R3.5)", i+2)
		}
		texts := userTexts(work[0])
		if last := texts[len(texts)-1]; !strings.HasPrefix(last, "You are continuing after a pause.") {
			t.Errorf("wake %d: work got %q, want its resume prompt (R3.11)", i+2, last)
		}
		prev = work
	}

	// R3.8: the judge is fresh every wake: a new session that never holds
	// an earlier judge's messages.
	rows := readManifest(t, filepath.Join(dir, "runs"))
	judges := map[string]bool{}
	for _, r := range rows {
		if strings.Contains(r.Step, "judge") {
			judges[r.SessionID] = true
			if slices.Contains(mapValues(l3.Steps), r.SessionID) {
				t.Errorf("judge session %s is in the lineage", r.SessionID)
			}
		}
	}
	if len(judges) != 3 {
		t.Errorf("%d judge sessions over three wakes, want 3 distinct: %v", len(judges), rowNames(rows))
	}
	bounds := append([]int{0}, mark...)
	for i := range 3 {
		judge := ofStep(reqs[bounds[i]:bounds[i+1]], "judge")
		if len(judge) == 0 || len(judge[0].Messages) != 1 {
			t.Errorf("wake %d: the first judge request must hold exactly its prompt (R3.8)", i+1)
		}
	}
	if got := rowNames(rows); !slices.Equal(got, []string{"clarify", "goals", "work", "work·judge#1", "work", "work·judge#1", "work", "work·judge#1"}) {
		t.Errorf("manifest rows across three wakes: %v", got)
	}
}

func TestPhraseOnWake(t *testing.T) { // R3.9
	t.Parallel()
	dir, srv, env := startedRun(t)
	brief := readFile(t, filepath.Join(dir, starter.BriefPath))
	l1 := readLineage(t, dir)
	mark := srv.Count()
	const phrase = "also greet in French"
	r := runFlower(t, dir, env, args(phrase)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	now := readFile(t, filepath.Join(dir, starter.BriefPath))
	added := regexp.MustCompile(`\n## Added on wake\n\n\d{4}-\d\d-\d\d \d\d:\d\d: ` + phrase + `\n$`)
	if !strings.HasPrefix(now, strings.TrimRight(brief, "\n")) || !added.MatchString(now) {
		t.Errorf("brief.md after the phrase:\n%s", now)
	}
	if n := starter.CountChecks(readFile(t, filepath.Join(dir, starter.GoalsPath))); n != 4 {
		t.Errorf("goals.md has %d checks after the phrase, want 4 (re-derived)", n)
	}
	all := srv.Requests()
	wake := all[mark:]
	if n := len(ofStep(wake, "clarify")); n != 0 {
		t.Errorf("%d clarify requests: a confirmed brief is frozen", n)
	}
	goals := ofStep(wake, "goals")
	prevGoals := ofStep(all[:mark], "goals")
	if len(goals) == 0 || !continues(t, prevGoals[len(prevGoals)-1], goals[0]) {
		t.Fatal("the goals step did not run connected to its session")
	}
	if texts := userTexts(goals[0]); !strings.Contains(texts[len(texts)-1], phrase) {
		t.Errorf("the goals prompt lacks the phrase: %q", texts[len(texts)-1])
	}
	work := ofStep(wake, "work")
	if texts := userTexts(work[0]); !strings.Contains(texts[len(texts)-1], phrase) {
		t.Errorf("the work prompt lacks the phrase: %q", texts[len(texts)-1])
	}
	if l := readLineage(t, dir); !mapsEqual(l.Steps, l1.Steps) {
		t.Errorf("lineage %v, before %v", l.Steps, l1.Steps)
	}
	if !strings.Contains(r.stdout, "2/4 goals (connected)") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

func TestNewArchivesTheThread(t *testing.T) { // R3.13
	t.Parallel()
	dir, srv, env := startedRun(t)
	lineage := readFile(t, filepath.Join(dir, "runs", workflow.LineageFile))
	brief := readFile(t, filepath.Join(dir, starter.BriefPath))
	goals := readFile(t, filepath.Join(dir, starter.GoalsPath))
	l1 := readLineage(t, dir)
	db, err := os.Stat(filepath.Join(dir, "runs", "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	if r := runFlower(t, dir, env, "--new"); r.code != 2 || !strings.Contains(r.stderr, "--new needs the new task") {
		t.Errorf("--new without a task: exit %d %s", r.code, r.stderr)
	}
	mark := srv.Count()
	const other = "write other.txt"
	r := runFlower(t, dir, env, args("--new", other)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	archives, err := os.ReadDir(filepath.Join(dir, starter.ArchiveDir))
	if err != nil || len(archives) != 1 || !regexp.MustCompile(`^\d{8}-\d{6}$`).MatchString(archives[0].Name()) {
		t.Fatalf("archive dir: %v %v", archives, err)
	}
	into := filepath.Join(dir, starter.ArchiveDir, archives[0].Name())
	for name, want := range map[string]string{workflow.LineageFile: lineage, "brief.md": brief, "goals.md": goals} {
		if got := readFile(t, filepath.Join(into, name)); got != want {
			t.Errorf("archived %s:\n%s\nwant:\n%s", name, got, want)
		}
	}
	now, err := os.Stat(filepath.Join(dir, "runs", "sessions.db"))
	if err != nil || !os.SameFile(db, now) {
		t.Errorf("sessions.db was replaced or moved: %v", err)
	}
	if r := runFlower(t, dir, nil, "show", l1.Steps["work"]); r.code != 0 {
		t.Errorf("the archived thread's work session is gone from the store: exit %d %s", r.code, r.stderr)
	}
	l := readLineage(t, dir)
	if l.Woke != 1 || l.Steps["clarify"] == "" || l.Steps["clarify"] == l1.Steps["clarify"] || l.Steps["work"] == l1.Steps["work"] {
		t.Errorf("lineage of the new thread %+v, old %+v", l, l1)
	}
	clarify := ofStep(srv.Requests()[mark:], "clarify")
	if len(clarify) == 0 || len(clarify[0].Messages) != 1 || taskOf(clarify[0].Messages) != other {
		t.Errorf("the new thread's clarification did not start fresh with the new task")
	}
	if b := readFile(t, filepath.Join(dir, starter.BriefPath)); !strings.Contains(b, other) {
		t.Errorf("new brief:\n%s", b)
	}
}

// TestTwoProcessesOneRunDir starts a second flower on a run dir another
// one drives: it stops at once with one line naming the holder and writes
// nothing of a run (DESIGN.md §3.6); started again once the first is done,
// it completes, and the manifest they share keeps both runs' rows (R3.4).
func TestTwoProcessesOneRunDir(t *testing.T) {
	t.Parallel()
	srv, env := fakeModel(t)
	held, release := make(chan struct{}), make(chan struct{})
	var holdOnce, releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // before the server closes
	srv.onRequest(func(r *modeltest.Request) {
		holdOnce.Do(func() { close(held); <-release })
	})
	dir := t.TempDir()
	runDir := filepath.Join(dir, "shared")
	for _, ws := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(dir, ws), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a := startFlower(t, dir, env, false, args("-r", runDir, "--workspace", "a", testTask)...)
	select {
	case <-held: // a drives the run dir and waits for its first answer
	case <-a.done:
		t.Fatalf("a ended early\n%s%s", a.stdout, a.stderr)
	}
	b := runFlower(t, dir, env, args("-r", runDir, "--workspace", "b", testTask)...)
	if b.code != 1 || !strings.Contains(b.stderr, "run dir in use") || !strings.Contains(b.stderr, fmt.Sprintf("pid %d", a.cmd.Process.Pid)) ||
		len(strings.Split(strings.TrimSpace(b.stderr), "\n")) != 1 {
		t.Errorf("the second process: exit %d\n%s%s", b.code, b.stdout, b.stderr)
	}
	if srv.Count() != 1 {
		t.Errorf("the second process sent model requests")
	}
	releaseOnce.Do(func() { close(release) })
	if r := a.wait(); r.code != 0 {
		t.Fatalf("a: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runFlower(t, dir, env, args("-r", runDir, "--workspace", "b", testTask)...); r.code != 0 {
		t.Fatalf("b again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	rows := readManifest(t, runDir)
	runs := map[string][]string{}
	for _, r := range rows {
		runs[r.Run] = append(runs[r.Run], r.Step)
	}
	if len(runs) != 2 {
		t.Fatalf("manifest has the rows of %d runs, want 2: %v", len(runs), runs)
	}
	for run, steps := range runs {
		if !slices.Equal(steps, []string{"clarify", "goals", "work", "work·judge#1"}) {
			t.Errorf("run %s rows %v", run, steps)
		}
	}
	for _, ws := range []string{"a", "b"} {
		if got := readFile(t, filepath.Join(dir, ws, "out.txt")); got != "hi\n" {
			t.Errorf("%s/out.txt = %q", ws, got)
		}
	}
}

func TestCorruptFilesAreIgnored(t *testing.T) { // R3.3, SPEC §7 (no stack trace)
	t.Parallel()
	dir, _, env := startedRun(t)
	garbage := []byte("\x00\xff{not json at all\n## Goal\x1b[31m")
	for _, p := range []string{filepath.Join("runs", workflow.LineageFile), filepath.Join("runs", workflow.ManifestFile), starter.BriefPath} {
		if err := os.WriteFile(filepath.Join(dir, p), garbage, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An older flower's snapshots of views (issue 19: nothing reads them).
	views := filepath.Join(dir, "runs", "views")
	if err := os.MkdirAll(views, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(views, "0123.view"), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	r := runFlower(t, dir, env, args()...)
	if r.code != 0 || strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "panic") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout + r.stderr
	for _, file := range []string{workflow.LineageFile, workflow.ManifestFile, "brief.md"} {
		if !regexp.MustCompile(`(?m)^.*ignored.*` + regexp.QuoteMeta(file) + `.*$`).MatchString(out) {
			t.Errorf("no line says %s was ignored:\n%s", file, out)
		}
	}
	// goals.md is intact, so goals stays frozen: a fresh lineage gets the
	// sessions of the steps that ran.
	if l := readLineage(t, dir); l.Workspace != dir || l.Steps["clarify"] == "" || l.Steps["work"] == "" {
		t.Errorf("lineage after the wake: %+v", l)
	}
	if got := rowNames(readManifest(t, filepath.Join(dir, "runs"))); !slices.Contains(got, "work·judge#1") {
		t.Errorf("manifest after the wake: %v", got)
	}
	if !starter.ParseBrief(readFile(t, filepath.Join(dir, starter.BriefPath))).Complete() {
		t.Error("brief.md was not written again")
	}
	if _, err := os.Stat(views); !os.IsNotExist(err) {
		t.Errorf("the old views/ is still in the run dir after a wake: %v", err)
	}
}

func TestAnswerFromStdin(t *testing.T) { // R6.3, R6.6
	t.Parallel()
	srv, env := fakeModel(t)
	// The ask comes only after the line typed first was taken: that line
	// must go to the inbox, not answer the later question.
	release := holdClarify(t, srv, nil)
	dir := t.TempDir()
	p := startFlower(t, dir, env, true, testTask) // attended: the default timeout
	noteThenAnswer(t, p, release, "use tabs")
	r := p.wait()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	clarify := ofStep(srv.Requests(), "clarify")
	if res := toolResults(clarify[1]); len(res) != 1 || res[0] != "The person answered:\n\n"+askFirst {
		t.Errorf("the ask's result: %q, want option 1", res)
	}
	// R10.3: the note reaches the model at the first message boundary,
	// with the ask's result, marked as the person's, without an inbox call;
	// the inbox then has nothing new.
	if got := delivered(clarify[1]); !strings.Contains(got, "use tabs") {
		t.Errorf("clarify's second request: delivered mail %q, want the typed line; user texts %q", got, userTexts(clarify[1]))
	}
	if res := toolResults(clarify[2]); len(res) != 2 || res[1] != human.InboxEmptyText {
		t.Errorf("the inbox's result: %q, want it empty (the note was delivered)", res)
	}
	if n := strings.Count(strings.Join(append(userTexts(clarify[3]), toolResults(clarify[3])...), "\n"), "use tabs"); n != 1 {
		t.Errorf("the note appears %d times in clarify's last request, want once", n)
	}
	qa := readFile(t, filepath.Join(dir, starter.QAPath))
	if !strings.Contains(qa, askQuestion) || !strings.Contains(qa, "State: answered") || !strings.Contains(qa, "> "+askFirst) {
		t.Errorf("qa.md:\n%s", qa)
	}
}

func mapKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return sorted(out)
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestFailedVerdictSendsFindingsToWork(t *testing.T) { // R3.2, R3.4, R3.8, R3.15
	t.Parallel()
	srv, env := fakeModelWith(t, playStrict)
	dir := t.TempDir()
	r := runFlower(t, dir, env, args(testTask)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := srv.Count(); got != perStrictRun {
		t.Errorf("%d model requests, want %d", got, perStrictRun)
	}
	rows := readManifest(t, filepath.Join(dir, "runs"))
	if got := rowNames(rows); !slices.Equal(got, []string{"clarify", "goals", "work", "work·judge#1", "work#round1", "work·judge#2"}) {
		t.Fatalf("manifest rows %v", got)
	}
	l := readLineage(t, dir)
	if got := mapKeys(l.Steps); !slices.Equal(got, []string{"clarify", "goals", "work"}) {
		t.Errorf("lineage steps %v: plain names only", got)
	}
	if l.Steps["work"] != rows[2].SessionID || rows[4].SessionID != rows[2].SessionID {
		t.Errorf("the work round ran in session %s, work in %s, lineage %s", rows[4].SessionID, rows[2].SessionID, l.Steps["work"])
	}
	if rows[3].SessionID == rows[5].SessionID {
		t.Error("both judge rounds ran in one session (R3.8)")
	}
	reqs := srv.Requests()
	work := ofStep(reqs, "work")
	if !continues(t, work[3], work[4]) {
		t.Error("the work round did not continue the work session")
	}
	if texts := userTexts(work[4]); !strings.Contains(texts[len(texts)-1], "must also say bye") {
		t.Errorf("the work round's prompt lacks the findings: %q", texts[len(texts)-1])
	}
	if judge := ofStep(reqs, "judge"); len(judge) != 6 || len(judge[3].Messages) != 1 {
		t.Error("the second judge round did not start fresh, with its prompt alone (R3.8)")
	}
	if got := readFile(t, filepath.Join(dir, "out.txt")); got != "hi\nbye\n" {
		t.Errorf("out.txt = %q", got)
	}
	for _, want := range []string{"work#round1 (connected)", "judge round 2 (fresh eyes)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestKill9DuringWorkRound(t *testing.T) { // R3.1, R3.4, R5.3
	if testing.Short() {
		t.Skip("crash case skipped with -short")
	}
	t.Parallel()
	srv, env := fakeModelWith(t, playStrict)
	tr := newTrap("work", 6, syscall.SIGKILL) // the round's second request
	srv.onRequest(tr.onRequest)
	dir := t.TempDir()
	p := startFlower(t, dir, env, false, args(testTask)...)
	tr.arm(p)
	if first := p.wait(); p.signal() != syscall.SIGKILL {
		t.Fatalf("flower was not killed (exit %d)\n%s%s", first.code, first.stdout, first.stderr)
	}
	cut := readLineage(t, dir)
	before := srv.Count()
	r := runFlower(t, dir, env, args()...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := srv.Count(); got != perStrictRun+1 {
		t.Errorf("%d model requests, want %d", got, perStrictRun+1)
	}
	if got := rowNames(readManifest(t, filepath.Join(dir, "runs"))); !slices.Equal(got, []string{"clarify", "goals", "work", "work·judge#1", "work#round1", "work·judge#2"}) {
		t.Errorf("manifest rows %v", got)
	}
	if l := readLineage(t, dir); !mapsEqual(l.Steps, cut.Steps) {
		t.Errorf("lineage %v, at the kill %v", l.Steps, cut.Steps)
	}
	resumed := ofStep(srv.Requests()[before:], "work")
	if len(resumed) == 0 || !continues(t, tr.request(), resumed[0]) {
		t.Error("the cut work round did not continue where it stopped")
	}
	if n := len(ofStep(srv.Requests()[before:], "judge")); n != 3 {
		t.Errorf("%d judge requests after the wake, want one round (3)", n)
	}
}

func TestCtrlCStopsAtABoundary(t *testing.T) { // R2.8, R3.7
	t.Parallel()
	srv, env := fakeModel(t)
	tr := newTrap("work", 2, syscall.SIGINT)
	srv.onRequest(tr.onRequest)
	dir := t.TempDir()
	p := startFlower(t, dir, env, false, args(testTask)...)
	tr.arm(p)
	first := p.wait()
	if first.code != exitInterrupted || !strings.Contains(first.stderr, "stopping after the current tool") {
		t.Fatalf("Ctrl-C: exit %d\n%s%s", first.code, first.stdout, first.stderr)
	}
	l := readLineage(t, dir)
	r := runFlower(t, dir, env, args()...)
	if r.code != 0 {
		t.Fatalf("the wake after Ctrl-C: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got, base := srv.Count(), len(oneRun(t).reqs); got != base+1 {
		t.Errorf("%d model requests, want %d (an uninterrupted run's %d + the one cut)", got, base+1, base)
	}
	if after := readLineage(t, dir); !mapsEqual(after.Steps, l.Steps) {
		t.Errorf("lineage %v, at Ctrl-C %v", after.Steps, l.Steps)
	}
	rows := readManifest(t, filepath.Join(dir, "runs"))
	if got := rowNames(rows); !slices.Equal(got, []string{"clarify", "goals", "work", "work·judge#1"}) || !rows[2].OK {
		t.Errorf("manifest rows %v", got)
	}
}

// TestPhraseAfterACrash adds a phrase on the wake after kill -9: the cut
// run is finished first, then the phrase gets a run of its own (R3.1,
// R3.9), and the wake is counted once.
func TestPhraseAfterACrash(t *testing.T) {
	t.Parallel()
	srv, env := fakeModel(t)
	tr := newTrap("work", 3, syscall.SIGKILL)
	srv.onRequest(tr.onRequest)
	dir := t.TempDir()
	p := startFlower(t, dir, env, false, args(testTask)...)
	tr.arm(p)
	if first := p.wait(); p.signal() != syscall.SIGKILL {
		t.Fatalf("flower was not killed (exit %d)\n%s%s", first.code, first.stdout, first.stderr)
	}
	before := srv.Count()
	const phrase = "also greet in French"
	r := runFlower(t, dir, env, args(phrase)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	rows := readManifest(t, filepath.Join(dir, "runs"))
	if got := rowNames(rows); !slices.Equal(got, []string{"clarify", "goals", "work", "work·judge#1", "goals", "work", "work·judge#1"}) ||
		rows[3].Run != rows[0].Run || rows[4].Run == rows[0].Run {
		t.Fatalf("manifest rows %v: the cut run finished, then a run for the phrase", got)
	}
	wake := srv.Requests()[before:]
	work := ofStep(wake, "work")
	if !continues(t, tr.request(), work[0]) {
		t.Error("the cut work step did not continue where it stopped")
	}
	var phrased bool
	for _, w := range work {
		if texts := userTexts(w); strings.Contains(texts[len(texts)-1], phrase) {
			phrased = true
		}
	}
	if !phrased {
		t.Error("no work prompt carried the phrase")
	}
	if l := readLineage(t, dir); l.Woke != 2 {
		t.Errorf("woke %d after two starts of flower, want 2", l.Woke)
	}
}

// TestPhraseDuringClarification types words on the wake after a crash cut
// the clarification: the clarification goes on and gets them (R3.1, R3.10).
func TestPhraseDuringClarification(t *testing.T) {
	t.Parallel()
	srv, env := fakeModel(t)
	tr := newTrap("clarify", 2, syscall.SIGKILL)
	srv.onRequest(tr.onRequest)
	dir := t.TempDir()
	p := startFlower(t, dir, env, false, args(testTask)...)
	tr.arm(p)
	if first := p.wait(); p.signal() != syscall.SIGKILL {
		t.Fatalf("flower was not killed (exit %d)\n%s%s", first.code, first.stdout, first.stderr)
	}
	before := srv.Count()
	const words = "greet in French"
	r := runFlower(t, dir, env, args(words)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	clarify := ofStep(srv.Requests()[before:], "clarify")
	if len(clarify) == 0 || !continues(t, tr.request(), clarify[0]) {
		t.Fatal("the cut clarification did not go on")
	}
	texts := userTexts(clarify[0])
	if last := texts[len(texts)-1]; !strings.HasPrefix(last, starter.ClarifyCrashPrompt) || !strings.Contains(last, words) {
		t.Errorf("the clarification went on with %q: the crash prompt and the words typed on the wake", last)
	}
}
