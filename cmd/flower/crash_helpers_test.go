package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow"
	"github.com/flower-run/flower/workflow/starter"
)

// The crash suite (SPEC R5.1-R5.7, R3.1; DESIGN.md §5) plays a whole
// starter flow against a fake Anthropic server, kills the real flower
// process with SIGKILL somewhere in it, wakes it with a bare flower and
// checks what reached the workspace and the model.
//
// Every name here starts with crash, so that the suite lives beside the
// other end-to-end tests of this package without sharing their helpers.

// crashTask is the task of every run of the suite.
const crashTask = "keep a log of x"

// The work step's side effects, one call each, in this order.
const (
	crashNotes    = "notes.txt" // written "one\n", then edited to "two\n"
	crashLog      = "log"       // Bash appends a line "x"
	crashEcho     = "echo x >> " + crashLog
	crashSlowEcho = "sleep 4; " + crashEcho // killed while it sleeps
)

// crashCalls are the tool calls of one run, in the order they run: the
// Nth hit of a failpoint is the Nth of them. Each response asks for one.
var crashCalls = []string{"clarify Write brief", "goals Write goals", "work Write notes.txt",
	"work Bash echo", "work Edit notes.txt", "judge Bash cat", "judge verdict"}

// crashStepOf names the starter step a system prompt belongs to (see
// workflow/prompts.go).
func crashStepOf(system string) string {
	for _, s := range []struct{ marker, step string }{
		{"the clarify step", "clarify"}, {"the goals step", "goals"},
		{"the work step", "work"}, {"the judge of flower", "judge"},
	} {
		if strings.Contains(system, s.marker) {
			return s.step
		}
	}
	return ""
}

// crashFlow plays the starter flow. Each step decides its next move from
// the request alone: how many tool results its session holds, whatever
// prompts came after the first. So it plays the same across crashes and
// resumes, like a model that reads its own transcript.
//
//	clarify: Write brief.md → end                                  2 requests
//	goals:   Write goals.md → end                                  2
//	work:    Write notes.txt → Bash echo → Edit notes.txt → end    4
//	judge:   Bash cat → verdict(pass) → end                        3
//
// The judge always passes: the suite checks the workspace itself.
type crashFlow struct {
	bash string // the work step's Bash command
}

// crashPerRun is the number of model requests of one uninterrupted run.
const crashPerRun = 11

func (f crashFlow) respond(r *modeltest.Request) modeltest.Turn {
	task, n := crashSeen(r.Messages)
	switch crashStepOf(r.System) {
	case "clarify":
		if n == 0 {
			return crashCall("Writing the brief.", "Write", map[string]any{"file_path": starter.BriefPath, "content": crashBrief(task)})
		}
		return modeltest.Turn{Text: "The brief is written."}
	case "goals":
		if n == 0 {
			return crashCall("Writing the goals.", "Write", map[string]any{"file_path": starter.GoalsPath,
				"content": "# Goals\n\n- [ ] notes.txt says two\n- [ ] log has one line x\n"})
		}
		return modeltest.Turn{Text: "goals.md has 2 checks."}
	case "work":
		switch n {
		case 0:
			return crashCall("Writing notes.", "Write", map[string]any{"file_path": crashNotes, "content": "one\n"})
		case 1:
			return crashCall("Logging.", "Bash", map[string]any{"command": f.bash})
		case 2:
			return crashCall("Editing notes.", "Edit", map[string]any{"file_path": crashNotes, "old_string": "one", "new_string": "two"})
		}
		return modeltest.Turn{Text: "Done."}
	case "judge":
		switch n {
		case 0:
			return crashCall("Looking.", "Bash", map[string]any{"command": "cat " + crashNotes + " " + crashLog})
		case 1:
			return crashCall("", workflow.VerdictName, map[string]any{"pass": true, "findings": "looked"})
		}
		return modeltest.Turn{Text: "Verdict given."}
	}
	return modeltest.Turn{Fault: &modeltest.Fault{Status: 400, Message: "crash test: a request from no starter step"}}
}

// crashSeen is the task quoted in the first prompt of a session and the
// number of tool results in it.
func crashSeen(msgs []model.Message) (task string, results int) {
	first := true
	for _, m := range msgs {
		if m.Role != model.User {
			continue
		}
		for _, b := range m.Content {
			switch v := b.(type) {
			case *model.Text:
				if first {
					task, first = v.Text, false
				}
			case *model.ToolResult:
				results++
			}
		}
	}
	// "The task, in the person's words:\n\n<task>\n\nClarify it ..."
	if parts := strings.Split(task, "\n\n"); len(parts) >= 3 {
		task = strings.TrimSpace(parts[1])
	}
	return task, results
}

func crashCall(text, name string, input map[string]any) modeltest.Turn {
	b, err := json.Marshal(input)
	if err != nil {
		panic(err)
	}
	return modeltest.Turn{Text: text, ToolCalls: []modeltest.ToolCall{{Name: name, Input: string(b)}}}
}

func crashBrief(task string) string {
	if task == "" {
		task = "(no task was given)" // still a complete brief: the Task check tells it apart
	}
	return "## Goal\n\n" + task + "\n\n## Done when\n\n- notes.txt says two\n\n" +
		"## Constraints\n\nNone stated.\n\n## Unknowns and assumptions\n\n- None.\n"
}

// crashFiles is what a run leaves in the workspace.
type crashFiles struct {
	Brief bool   // a complete brief.md
	Task  bool   // whose Goal holds the task
	Goals bool   // goals.md with checks
	Notes string // notes.txt; "" when missing
	Log   int    // lines "x" in log
}

// crashDone is the workspace of a run in which every effect happened once.
var crashDone = crashFiles{Brief: true, Task: true, Goals: true, Notes: "two\n", Log: 1}

func readCrashFiles(t *testing.T, dir string) crashFiles {
	t.Helper()
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		return string(data)
	}
	b := starter.ParseBrief(read(starter.BriefPath))
	f := crashFiles{Brief: b.Complete(), Task: strings.Contains(b.Sections["Goal"], crashTask),
		Goals: starter.CountChecks(read(starter.GoalsPath)) > 0, Notes: read(crashNotes)}
	for _, line := range strings.Split(read(crashLog), "\n") {
		switch line {
		case "x":
			f.Log++
		case "":
		default:
			t.Errorf("log holds %q", line)
		}
	}
	return f
}

// crashRun is one workspace with its own fake model. Its processes and
// its fake are the package's one harness (wake_helpers_test.go): proc,
// startFlower and fake; only the flow it plays is its own.
type crashRun struct {
	t    *testing.T
	dir  string
	srv  *fake
	env  []string
	flow crashFlow
}

// newCrashRun prepares a workspace, with flower.yaml setting policy as the
// default resume policy unless it is retry (the default without a file).
func newCrashRun(t *testing.T, f crashFlow, policy config.Policy) *crashRun {
	t.Helper()
	c := &crashRun{t: t, dir: t.TempDir(), flow: f}
	c.srv, c.env = fakeModelWith(t, f.respond)
	if policy != config.Retry {
		yaml := "resume:\n  default: " + string(policy) + "\n"
		if err := os.WriteFile(filepath.Join(c.dir, config.FileName), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func (c *crashRun) runDir() string { return filepath.Join(c.dir, "runs") }

// start runs flower in the workspace without waiting; extra is added to
// the environment.
func (c *crashRun) start(args []string, extra ...string) *proc {
	c.t.Helper()
	return startFlower(c.t, c.dir, append(slices.Clone(c.env), extra...), false, args...)
}

// crashed starts flower "task" and waits for it to die by SIGKILL.
func (c *crashRun) crashed(arm func(p *proc), extra ...string) {
	c.t.Helper()
	p := c.start([]string{crashTask}, extra...)
	if arm != nil {
		arm(p)
	}
	if r, sig := p.ended(); sig != syscall.SIGKILL {
		c.t.Fatalf("flower was not killed (exit %d)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// wake runs a bare flower, which must finish the cut run and exit 0.
func (c *crashRun) wake() ran {
	c.t.Helper()
	r, _ := c.start(nil).ended()
	if r.code != 0 {
		c.t.Fatalf("the wake after the crash: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
		c.t.Fatalf("the wake crashed:\n%s", r.stderr)
	}
	return r
}

// killAtRequest SIGKILLs the flower of arm when the fake receives its nth
// request, before answering it.
func (c *crashRun) killAtRequest(n int) func(p *proc) {
	var (
		once  sync.Once
		ready = make(chan *os.Process, 1)
	)
	c.srv.onRequest(func(r *modeltest.Request) {
		if r.N == n {
			once.Do(func() { (<-ready).Kill() })
		}
	})
	return func(p *proc) { ready <- p.cmd.Process }
}

// crashState is what the store says of the newest run.
type crashState struct {
	Run    string
	Status store.RunStatus
	Done   map[string]bool
	Step   string
}

func (c *crashRun) state() crashState {
	c.t.Helper()
	r := newestRun(c.t, c.runDir())
	s := crashState{Run: r.ID, Status: r.Status, Step: r.Step, Done: map[string]bool{}}
	for _, d := range r.Done {
		s.Done[d] = true
	}
	return s
}

// crashKey identifies what a request asked: two requests with one key
// asked the model the same thing.
func crashKey(r *modeltest.Request) string {
	b, err := json.Marshal(r.Messages)
	if err != nil {
		panic(err)
	}
	return r.System + "\x00" + string(b)
}

// checkRequests checks the model requests of crash and wake against an
// uninterrupted run's: at most cut more (the request the kill left
// unanswered), none asked twice but that one, and none from a step that
// was done before the wake (R3.1, R5.3). wakeFrom is the number of
// requests before the wake; done the steps state.json had done then.
func (c *crashRun) checkRequests(cut, wakeFrom int, done map[string]bool) {
	c.t.Helper()
	reqs := c.srv.Requests()
	if len(reqs) > crashPerRun+cut {
		c.t.Errorf("%d model requests over crash and wake, want at most %d (an uninterrupted run's %d + %d cut)",
			len(reqs), crashPerRun+cut, crashPerRun, cut)
	}
	seen, again := map[string]int{}, 0
	for _, r := range reqs {
		if seen[crashKey(r)]++; seen[crashKey(r)] > 1 {
			again++
		}
	}
	if again > cut {
		c.t.Errorf("%d requests asked the model again what it had already been asked (at most %d may be: the cut one)", again, cut)
	}
	for _, r := range reqs[wakeFrom:] {
		if step := crashStepOf(r.System); done[step] {
			c.t.Errorf("the wake sent request %d of step %s, done before the crash: a completed step was re-run", r.N, step)
		}
	}
}

// checkFinished checks that the cut run, not a new one, finished, and
// that the wake ran nothing more: every manifest row is of that run (R3.1).
// With run "" any run will do.
func (c *crashRun) checkFinished(run string) {
	c.t.Helper()
	s := c.state()
	if s.Status != store.RunFinished || (run != "" && s.Run != run) {
		c.t.Errorf("after the wake the store's newest run is %s %s, want run %s finished", s.Run, s.Status, run)
	}
	rows, err := workflow.ReadManifest(filepath.Join(c.runDir(), workflow.ManifestFile))
	if err != nil || len(rows) == 0 {
		c.t.Errorf("manifest after the wake: %d rows, %v", len(rows), err)
	}
	for _, r := range rows {
		if run != "" && r.Run != run {
			c.t.Errorf("manifest row %s of run %s: the wake ran more than the cut run %s", r.Step, r.Run, run)
		}
	}
}

// A process as /proc shows it.
type crashProc struct {
	pid, ppid int
	comm      string
	state     byte
	start     string // start time, in clock ticks after boot: tells a reused pid apart
}

// crashProcs lists the processes of the machine.
func crashProcs() map[int]crashProc {
	out := map[int]crashProc{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := crashReadProc(pid); ok {
			out[pid] = p
		}
	}
	return out
}

// crashReadProc reads /proc/pid/stat: "pid (comm) state ppid ... starttime ...".
func crashReadProc(pid int) (crashProc, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return crashProc{}, false
	}
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return crashProc{}, false
	}
	f := strings.Fields(s[end+1:]) // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime
	if len(f) < 20 {
		return crashProc{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return crashProc{pid: pid, ppid: ppid, comm: s[open+1 : end], state: f[0][0], start: f[19]}, true
}

// alive reports whether the process still runs (a zombie has ended).
func (p crashProc) alive() bool {
	now, ok := crashReadProc(p.pid)
	return ok && now.start == p.start && now.state != 'Z' && now.state != 'X'
}

// crashDescendants are the processes below root.
func crashDescendants(root int) []crashProc {
	procs := crashProcs()
	var out []crashProc
	for _, p := range procs {
		for q, ok := p, true; ok && q.ppid > 1; q, ok = procs[q.ppid] {
			if q.ppid == root {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// crashPoll calls cond until it reports true, every few milliseconds, and
// fails the test past the guard or when stop is closed first. It waits on
// a condition the test cannot be told about (a process appearing or
// dying); it never waits for time to pass.
func crashPoll(t *testing.T, what string, stop <-chan struct{}, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(guard)
	for !cond() {
		select {
		case <-tick.C:
		case <-stop:
			if cond() {
				return
			}
			t.Fatalf("flower ended before %s", what)
		case <-deadline:
			t.Fatalf("no %s within %v", what, guard)
		}
	}
}
