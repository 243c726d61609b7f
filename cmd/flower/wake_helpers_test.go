package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/workflow"
	"github.com/flower-run/flower/workflow/starter"
)

// The starter flow played by a fake Anthropic server. Each step is
// recognized by its system prompt and decides its next move from the
// request alone (how many tool results came after the person's last
// message), so it plays the same across resumes, crashes and wakes.

// testTask is the task of every starter run in these tests.
const testTask = "write out.txt saying hi"

// The ask the clarify step makes, and its options.
const (
	askQuestion = "Which greeting should out.txt hold?"
	askFirst    = "hi"
	askSecond   = "hello"
)

// perRun is the number of model requests of one uninterrupted starter run
// played by play: clarify 4, goals 3, work 4, judge 3.
const perRun = 14

// stepOf names the starter step a system prompt belongs to.
func stepOf(system string) string {
	switch {
	case strings.Contains(system, "the clarify step"):
		return "clarify"
	case strings.Contains(system, "the goals step"):
		return "goals"
	case strings.Contains(system, "the work step"):
		return "work"
	case strings.Contains(system, "the judge of flower"):
		return "judge"
	}
	return ""
}

// play answers the requests of the starter flow.
//
//	clarify: ask (with options) → inbox → Write brief.md → end
//	goals:   Read brief.md → Write goals.md → end
//	work:    Read goals.md → Write out.txt → Bash cat out.txt → end
//	judge:   Bash cat out.txt → verdict → end
//
// The judge passes when out.txt says hi. Work given a failed verdict's
// findings writes "hi" and "bye".
func play(r *modeltest.Request) modeltest.Turn { return playing(r, false) }

// playStrict is play with a judge that passes only when out.txt also says
// bye: the first verdict fails and a work round follows.
func playStrict(r *modeltest.Request) modeltest.Turn { return playing(r, true) }

// perStrictRun is the number of model requests of an uninterrupted run
// played by playStrict: one more work round (4) and judge round (3).
const perStrictRun = perRun + 7

func playing(r *modeltest.Request, strict bool) modeltest.Turn {
	prompt, results := lastPrompt(r.Messages)
	n := len(results)
	switch stepOf(r.System) {
	case "clarify":
		switch n {
		case 0:
			return call("I need one answer.", "ask", map[string]any{"question": askQuestion, "options": []string{askFirst, askSecond}})
		case 1:
			return call("Checking the inbox.", "inbox", map[string]any{})
		case 2:
			return call("Writing the brief.", "Write", map[string]any{"file_path": starter.BriefPath,
				"content": testBrief(taskOf(r.Messages), results[0], results[1]+delivered(r))})
		}
		return modeltest.Turn{Text: "The brief is written."}
	case "goals":
		switch n {
		case 0:
			return call("Reading the brief.", "Read", map[string]any{"file_path": starter.BriefPath})
		case 1:
			goals := "# Goals\n\n- [ ] out.txt exists\n- [ ] out.txt says hi\n- [ ] `cat out.txt` exits 0\n"
			if strings.Contains(results[0], "## Added on wake") {
				goals += "- [ ] the addition on wake is done\n"
			}
			return call("Writing the goals.", "Write", map[string]any{"file_path": starter.GoalsPath, "content": goals})
		}
		return modeltest.Turn{Text: "goals.md has its checks."}
	case "work":
		switch n {
		case 0:
			return call("Reading the goals.", "Read", map[string]any{"file_path": starter.GoalsPath})
		case 1:
			content := "hi\n"
			if strings.Contains(prompt, "does not pass yet") {
				content = "hi\nbye\n"
			}
			return call("Writing out.txt.", "Write", map[string]any{"file_path": "out.txt", "content": content})
		case 2:
			return call("Checking it.", "Bash", map[string]any{"command": "cat out.txt"})
		}
		return modeltest.Turn{Text: "Done: out.txt says hi. Prompt was: " + firstLine(prompt)}
	case "judge":
		switch n {
		case 0:
			return call("Checking out.txt myself.", "Bash", map[string]any{"command": "cat out.txt"})
		case 1:
			out := strings.TrimSpace(rerunOutput(results[0]))
			pass, findings := out == "hi", "cat out.txt printed: "+out
			if strict {
				pass = out == "hi\nbye"
				if !pass {
					findings = "out.txt must also say bye on its second line; cat out.txt printed: " + out
				}
			}
			return call("", workflow.VerdictName, map[string]any{"pass": pass, "findings": findings})
		}
		return modeltest.Turn{Text: "Verdict given."}
	}
	return modeltest.Turn{Fault: &modeltest.Fault{Status: 400, Message: "test: a request from no starter step"}}
}

func call(text, name string, input map[string]any) modeltest.Turn {
	b, err := json.Marshal(input)
	if err != nil {
		panic(err)
	}
	return modeltest.Turn{Text: text, ToolCalls: []modeltest.ToolCall{{Name: name, Input: string(b)}}}
}

func testBrief(task, answer, inbox string) string {
	return "## Goal\n\nDeliver: " + task + "\n\n" +
		"## Done when\n\n- out.txt exists and says hi\n\n" +
		"## Constraints\n\nNone stated.\n\n" +
		"## Unknowns and assumptions\n\n- " + askQuestion + " " + oneLine(answer) + "\n- Inbox: " + oneLine(inbox) + "\n"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// lastPrompt finds the person's last text message and the tool results
// that came after it. The fixed prompt that continues a cut clarification
// (with what the person typed on the wake, if anything) is not a new task:
// the step goes on counting.
// rerunOutput is what a command printed, without the note flower puts
// before the result of a call it ran again after a crash (issue 22 item
// 4): a judge that reads the note still sees what cat printed. Without
// it, a worker killed during the judge's cat failed the run (TestWorkers).
func rerunOutput(content string) string {
	const again = "The result of the run again:\n"
	if strings.HasPrefix(content, "[flower] A crash stopped flower") {
		if _, out, ok := strings.Cut(content, again); ok {
			return out
		}
	}
	return content
}

func lastPrompt(msgs []model.Message) (prompt string, results []string) {
	for _, m := range msgs {
		if m.Role != model.User {
			continue
		}
		for _, b := range m.Content {
			switch v := b.(type) {
			case *model.Text:
				// Mail the loop delivered is not a new prompt either.
				if !strings.HasPrefix(v.Text, starter.ClarifyCrashPrompt) && !strings.HasPrefix(v.Text, human.DeliveredHeader) {
					prompt, results = v.Text, nil
				}
			case *model.ToolResult:
				results = append(results, v.Content)
			}
		}
	}
	return prompt, results
}

// taskOf is the person's task in the clarify step's first message:
// "The task, in the person's words:\n\n<task>\n\nClarify it ...".
func taskOf(msgs []model.Message) string {
	if len(msgs) == 0 {
		return ""
	}
	parts := strings.Split(msgs[0].TextOf(), "\n\n")
	if len(parts) < 3 {
		return ""
	}
	return strings.TrimSpace(parts[1])
}

// delivered is the mail the loop delivered in a request's messages.
func delivered(r *modeltest.Request) string {
	var out string
	for _, t := range userTexts(r) {
		if strings.HasPrefix(t, human.DeliveredHeader) {
			out += " " + strings.TrimPrefix(t, human.DeliveredHeader)
		}
	}
	return out
}

// userTexts are the texts of every user message of a request.
func userTexts(r *modeltest.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role != model.User {
			continue
		}
		for _, b := range m.Content {
			if t, ok := b.(*model.Text); ok {
				out = append(out, t.Text)
			}
		}
	}
	return out
}

// toolResults are the contents of every tool result of a request.
func toolResults(r *modeltest.Request) []string {
	var out []string
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if t, ok := b.(*model.ToolResult); ok {
				out = append(out, t.Content)
			}
		}
	}
	return out
}

// ofStep keeps the requests of one starter step, in order.
func ofStep(reqs []*modeltest.Request, step string) []*modeltest.Request {
	var out []*modeltest.Request
	for _, r := range reqs {
		if stepOf(r.System) == step {
			out = append(out, r)
		}
	}
	return out
}

// messagesJSON is the neutral form of a request's messages, for comparing
// what two requests carried.
func messagesJSON(t *testing.T, msgs []model.Message) []string {
	t.Helper()
	out := make([]string, len(msgs))
	for i, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// continues reports whether later carries everything earlier did: the same
// messages, except that later's copy of earlier's last message may have
// more blocks after earlier's (a prompt added to the tool results).
func continues(t *testing.T, earlier, later *modeltest.Request) bool {
	t.Helper()
	e, l := earlier.Messages, later.Messages
	if len(e) == 0 || len(l) < len(e) {
		return false
	}
	ej, lj := messagesJSON(t, e[:len(e)-1]), messagesJSON(t, l[:len(e)-1])
	for i := range ej {
		if ej[i] != lj[i] {
			return false
		}
	}
	last, got := e[len(e)-1], l[len(e)-1]
	if last.Role != got.Role || len(got.Content) < len(last.Content) {
		return false
	}
	a := messagesJSON(t, []model.Message{last})
	b := messagesJSON(t, []model.Message{{Role: got.Role, Content: got.Content[:len(last.Content)]}})
	return a[0] == b[0]
}

// watched collects a child's output and lets a test wait for a text.
type watched struct {
	mu      sync.Mutex    // guards buf and changed
	buf     bytes.Buffer  // everything written so far
	changed chan struct{} // closed and replaced on every write
}

func newWatched() *watched { return &watched{changed: make(chan struct{})} }

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	close(w.changed)
	w.changed = make(chan struct{})
	return len(p), nil
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// snapshot is the text so far and a channel closed at the next write.
func (w *watched) snapshot() (string, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String(), w.changed
}

// waitFor blocks until the output holds text, or done is closed first (the
// process ended): then it reports false.
func (w *watched) waitFor(text string, done <-chan struct{}) bool {
	for {
		w.mu.Lock()
		has, changed := strings.Contains(w.buf.String(), text), w.changed
		w.mu.Unlock()
		if has {
			return true
		}
		select {
		case <-changed:
		case <-done:
			return strings.Contains(w.String(), text)
		}
	}
}

// proc is a flower process running in the background.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser // nil unless started with a stdin pipe
	stdout *watched
	stderr *watched
	done   chan struct{} // closed when the process has ended
	err    error         // Wait's error, once done
}

// guard bounds every wait of these tests: a hung child fails the test with
// its output instead of stalling the suite. It is not a sleep: no test
// waits for it to pass.
const guard = 2 * time.Minute

// startFlower starts the binary in dir, like flower, without waiting.
// With pipeStdin the test can type lines; otherwise stdin is empty.
func startFlower(t *testing.T, dir string, env []string, pipeStdin bool, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, stdout: newWatched(), stderr: newWatched(), done: make(chan struct{})}
	p.cmd = exec.Command(flowerBin, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(baseEnv(dir), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	p.cmd.WaitDelay = 10 * time.Second
	if pipeStdin {
		var err error
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the process to end (failing the test past the guard).
func (p *proc) wait() ran {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(guard):
		p.cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("flower %v did not end within %v\nstdout:\n%s\nstderr:\n%s", p.cmd.Args[1:], guard, p.stdout, p.stderr)
	}
	r := ran{stdout: p.stdout.String(), stderr: p.stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(p.err, &ee):
		r.code = ee.ExitCode()
	case p.err != nil:
		p.t.Fatal(p.err)
	}
	if strings.Contains(r.stderr, "WARNING: DATA RACE") {
		p.t.Fatalf("flower %v: data race\n%s", p.cmd.Args[1:], r.stderr)
	}
	return r
}

// ended waits for the process to end and returns how it ended, with the
// signal that ended it, if one did.
func (p *proc) ended() (ran, syscall.Signal) {
	p.t.Helper()
	r := p.wait()
	return r, p.signal()
}

// signal is the signal that ended the process, or 0.
func (p *proc) signal() syscall.Signal {
	var ee *exec.ExitError
	if !errors.As(p.err, &ee) {
		return 0
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0
	}
	return ws.Signal()
}

// waitOutput waits until stdout holds text (failing the test if the
// process ends first or the guard passes).
func (p *proc) waitOutput(text string) {
	p.t.Helper()
	got := make(chan bool, 1)
	go func() { got <- p.stdout.waitFor(text, p.done) }()
	select {
	case ok := <-got:
		if ok {
			return
		}
		p.t.Fatalf("flower ended without printing %q\nstdout:\n%s\nstderr:\n%s", text, p.stdout, p.stderr)
	case <-time.After(guard):
		p.cmd.Process.Kill()
		p.t.Fatalf("flower did not print %q within %v\nstdout:\n%s", text, guard, p.stdout)
	}
}

// trap sends a signal to a flower process when the fake server sees the
// nth request of a step, and answers it only once the process has ended:
// the process dies (or stops) in the middle of that step, with the request
// unanswered.
type trap struct {
	step string
	n    int
	sig  syscall.Signal

	armed chan struct{} // closed once proc is set
	mu    sync.Mutex    // guards seen, proc, req, once
	seen  int
	proc  *os.Process
	done  <-chan struct{}    // closed when proc has ended
	req   *modeltest.Request // the request the process was stopped at
	once  bool
}

func newTrap(step string, n int, sig syscall.Signal) *trap {
	return &trap{step: step, n: n, sig: sig, armed: make(chan struct{})}
}

// arm points the trap at a started process.
func (tr *trap) arm(p *proc) {
	tr.mu.Lock()
	tr.proc, tr.done = p.cmd.Process, p.done
	tr.mu.Unlock()
	close(tr.armed)
}

// onRequest is the fake server's OnRequest hook.
func (tr *trap) onRequest(r *modeltest.Request) {
	if stepOf(r.System) != tr.step {
		return
	}
	tr.mu.Lock()
	tr.seen++
	hit := tr.seen == tr.n && !tr.once
	if hit {
		tr.once, tr.req = true, r
	}
	tr.mu.Unlock()
	if !hit {
		return
	}
	<-tr.armed
	tr.mu.Lock()
	p, done := tr.proc, tr.done
	tr.mu.Unlock()
	p.Signal(tr.sig)
	select { // a process stopped by SIGTERM must not get this answer first
	case <-done:
	case <-time.After(guard):
	}
}

func (tr *trap) request() *modeltest.Request {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.req
}

// fake is a fake Anthropic server with a hook called with each request
// before it is answered, which may also hold the request unanswered.
type fake struct {
	*modeltest.Server
	mu   sync.Mutex // guards hook
	hook func(*modeltest.Request)
}

func (f *fake) onRequest(hook func(*modeltest.Request)) {
	f.mu.Lock()
	f.hook = hook
	f.mu.Unlock()
}

// fakeModel starts a fake Anthropic server playing the starter flow and
// returns it with the environment that points flower at it.
func fakeModel(t *testing.T) (*fake, []string) {
	t.Helper()
	return fakeModelWith(t, play)
}

func fakeModelWith(t *testing.T, respond modeltest.Responder) (*fake, []string) {
	t.Helper()
	f := &fake{}
	f.Server = modeltest.NewAnthropic(func(r *modeltest.Request) modeltest.Turn {
		f.mu.Lock()
		hook := f.hook
		f.mu.Unlock()
		if hook != nil {
			hook(r)
		}
		return respond(r)
	})
	t.Cleanup(f.Close)
	return f, []string{"ANTHROPIC_BASE_URL=" + f.URL, "ANTHROPIC_API_KEY=test"}
}

func readLineage(t *testing.T, dir string) workflow.LineageExport {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "runs", workflow.LineageFile))
	if err != nil {
		t.Fatal(err)
	}
	var l workflow.LineageExport
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatalf("lineage.json: %v\n%s", err, data)
	}
	return l
}

func readManifest(t *testing.T, runDir string) []workflow.Row {
	t.Helper()
	rows, err := workflow.ReadManifest(filepath.Join(runDir, workflow.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// rowNames are the step names of manifest rows, in order.
func rowNames(rows []workflow.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Step
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// fileInfo is what a read-only command must leave alone.
type fileInfo struct {
	size  int64
	mode  fs.FileMode
	mtime time.Time
}

// snapshot lists every file and directory under dir with its size, mode
// and modification time.
func snapshot(t *testing.T, dir string) map[string]fileInfo {
	t.Helper()
	out := map[string]fileInfo{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			// SQLite creates and removes its -wal and -shm files around
			// every reader's connection: a directory's time changes,
			// no file's content does.
			out[path] = fileInfo{mode: fi.Mode()}
			return nil
		}
		out[path] = fileInfo{fi.Size(), fi.Mode(), fi.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runsOf returns the runs a run dir's store holds, oldest first.
func runsOf(t *testing.T, runDir string) []store.Run {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(runDir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// newestRun is the run a run dir's store created last.
func newestRun(t *testing.T, runDir string) store.Run {
	t.Helper()
	runs := runsOf(t, runDir)
	if len(runs) == 0 {
		t.Fatalf("no run in %s", runDir)
	}
	return runs[len(runs)-1]
}

// holdClarify holds clarify's first request until release is called, so
// that a line typed meanwhile is mail, not the answer to the question that
// follows; hook, when set, sees every request too. Call it after the fake
// is made: release runs at cleanup, before the fake closes.
func holdClarify(t *testing.T, srv *fake, hook func(*modeltest.Request)) (release func()) {
	held := make(chan struct{})
	var once, released sync.Once
	release = func() { released.Do(func() { close(held) }) }
	t.Cleanup(release)
	srv.onRequest(func(r *modeltest.Request) {
		if stepOf(r.System) == "clarify" {
			once.Do(func() { <-held })
		}
		if hook != nil {
			hook(r)
		}
	})
	return release
}

// noteThenAnswer types note while clarify is held (it is mail, which the
// loop delivers at the next message boundary),
// releases clarify, and answers its question with option 1.
func noteThenAnswer(t *testing.T, p *proc, release func(), note string) {
	t.Helper()
	if _, err := p.stdin.Write([]byte(note + "\n")); err != nil {
		t.Fatal(err)
	}
	p.waitOutput("✉ noted")
	release()
	p.waitOutput("? " + askQuestion)
	if _, err := p.stdin.Write([]byte("1\n")); err != nil {
		t.Fatal(err)
	}
}

// oneCall is a model that makes one call of tool with input, then ends
// its turn quoting the result it got.
func oneCall(tool, input string) modeltest.Responder {
	return func(r *modeltest.Request) modeltest.Turn {
		if res := toolResults(r); len(res) > 0 {
			return modeltest.Turn{Text: "got: " + res[len(res)-1]}
		}
		return modeltest.Turn{Text: "Calling.", ToolCalls: []modeltest.ToolCall{{Name: tool, Input: input}}}
	}
}
