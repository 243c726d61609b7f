package workflow

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/tool"
)

// A workflow run in process: a runtime over SQLite in a temp dir, talking
// to a fake Anthropic server. The fake plays steps whose instructions are
// "You are step <name>." (each writes <name>.txt, then ends its turn) and a
// judge that passes. A step in fail answers with a fatal API error.

func stepNamed(system string) string {
	if rest, ok := strings.CutPrefix(system, "You are step "); ok {
		name, _, _ := strings.Cut(rest, ".")
		return name
	}
	if strings.HasPrefix(system, "You are the judge.") {
		return "judge"
	}
	return ""
}

func flowModel(fail map[string]bool) modeltest.Responder {
	return func(r *modeltest.Request) modeltest.Turn {
		name := stepNamed(r.System)
		if fail[name] {
			return modeltest.Turn{Fault: &modeltest.Fault{Status: 400, Type: "invalid_request_error", Message: "test: " + name + " fails"}}
		}
		n := toolResultsAfterPrompt(r.Messages)
		switch {
		case name == "judge" && n == 0:
			return modeltest.Turn{ToolCalls: []modeltest.ToolCall{{Name: VerdictName, Input: `{"pass":true,"findings":"all good"}`}}}
		case name == "judge":
			return modeltest.Turn{Text: "Verdict given."}
		case n == 0:
			in, _ := json.Marshal(map[string]string{"file_path": name + ".txt", "content": name + "\n"})
			return modeltest.Turn{Text: "Writing.", ToolCalls: []modeltest.ToolCall{{Name: "Write", Input: string(in)}}}
		}
		return modeltest.Turn{Text: name + " done"}
	}
}

// toolResultsAfterPrompt counts the tool results after the last user text.
func toolResultsAfterPrompt(msgs []model.Message) int {
	n := 0
	for _, m := range msgs {
		for _, b := range m.Content {
			switch b.(type) {
			case *model.Text:
				if m.Role == model.User {
					n = 0
				}
			case *model.ToolResult:
				n++
			}
		}
	}
	return n
}

type flowFixture struct {
	t      *testing.T
	ws     string
	runDir string
	srv    *modeltest.Server
	mu     sync.Mutex
	// hook is called before each answer; when it reports true the request
	// is never answered (the fake holds it until the client goes away).
	// Guarded by mu.
	hook func(r *modeltest.Request) (hold bool)
}

func newFlowFixture(t *testing.T, fail map[string]bool) *flowFixture {
	t.Helper()
	f := &flowFixture{t: t, ws: t.TempDir()}
	f.runDir = filepath.Join(f.ws, "runs")
	play := flowModel(fail)
	f.srv = modeltest.NewAnthropic(func(r *modeltest.Request) modeltest.Turn {
		f.mu.Lock()
		hook := f.hook
		f.mu.Unlock()
		if hook != nil && hook(r) {
			return modeltest.Turn{Fault: &modeltest.Fault{Delay: time.Hour}}
		}
		return play(r)
	})
	t.Cleanup(f.srv.Close)
	return f
}

func (f *flowFixture) onRequest(hook func(r *modeltest.Request) bool) {
	f.mu.Lock()
	f.hook = hook
	f.mu.Unlock()
}

// runtime is a new runtime over the fixture's store, as a new process
// would build it.
func (f *flowFixture) runtime() *agent.Runtime {
	f.t.Helper()
	s, err := sqlite.Open(filepath.Join(f.runDir, "sessions.db"))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { s.Close() })
	rt, err := agent.New(agent.Options{Workspace: f.ws, Store: s,
		Provider: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: f.srv.URL}),
		Tools:    []tool.Tool{VerdictTool{}}})
	if err != nil {
		f.t.Fatal(err)
	}
	return rt
}

func testStep(name string) Step {
	return Step{Name: name, Prompt: "Do " + name + ".",
		Spec: agent.Spec{Name: name, Instructions: "You are step " + name + ".", Tools: []string{"Write"}, Model: "claude-sonnet-4-6"}}
}

func testJudge(work string) *Judge {
	return &Judge{Work: work, Prompt: "Judge it.",
		Spec: agent.Spec{Name: "judge", Instructions: "You are the judge.", Tools: []string{VerdictName}, Model: "claude-sonnet-4-6"}}
}

type stepCall struct {
	step string
	res  agent.Result
}

func resultJSON(t *testing.T, res any) string {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkOnStepIsManifest checks that OnStep saw exactly the manifest's rows,
// each with the full result.
func checkOnStepIsManifest(t *testing.T, runDir string, calls []stepCall) {
	t.Helper()
	rows, err := ReadManifest(filepath.Join(runDir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(calls) {
		t.Fatalf("OnStep called %d times, manifest has %d rows", len(calls), len(rows))
	}
	for i, c := range calls {
		want := fullRow(stepResult(rows[i].Run, c.step, c.res))
		if resultJSON(t, want) != resultJSON(t, rows[i]) {
			t.Errorf("OnStep(%s, %s)\nmanifest %s", c.step, resultJSON(t, want), resultJSON(t, rows[i]))
		}
	}
}

func TestOnStepAfterEveryStep(t *testing.T) { // R6.10
	f := newFlowFixture(t, nil)
	w := New(testStep("a"), testStep("b"))
	w.Judge = testJudge("b")
	var calls []stepCall
	w.OnStep = func(step string, res agent.Result) { calls = append(calls, stepCall{step, res}) }
	out := w.Run(context.Background(), f.runtime(), Options{RunDir: f.runDir})
	if !out.Passed || out.Err != nil {
		t.Fatalf("outcome %+v", out)
	}
	var names []string
	for _, c := range calls {
		names = append(names, c.step)
		if !c.res.OK || c.res.SessionID == "" || c.res.Turns != 2 || c.res.Start.IsZero() || c.res.End.Before(c.res.Start) {
			t.Errorf("OnStep(%s) got a partial result: %+v", c.step, c.res)
		}
	}
	if strings.Join(names, " ") != "a b b·judge#1" {
		t.Fatalf("OnStep calls %v", names)
	}
	if calls[0].res.Text != "a done" || calls[1].res.Text != "b done" {
		t.Errorf("texts %q %q", calls[0].res.Text, calls[1].res.Text)
	}
	checkOnStepIsManifest(t, f.runDir, calls)
}

func TestOnStepAfterAFailedStep(t *testing.T) { // R6.10: failures included
	f := newFlowFixture(t, map[string]bool{"b": true})
	w := New(testStep("a"), testStep("b"), testStep("c"))
	var calls []stepCall
	w.OnStep = func(step string, res agent.Result) {
		calls = append(calls, stepCall{step, res})
		panic("a broken OnStep must not harm the run")
	}
	out := w.Run(context.Background(), f.runtime(), Options{RunDir: f.runDir})
	if out.Passed || out.Err == nil || !strings.Contains(out.Err.Error(), "test: b fails") {
		t.Fatalf("outcome %+v", out)
	}
	if len(calls) != 2 || calls[0].step != "a" || calls[1].step != "b" {
		t.Fatalf("OnStep calls %+v", calls)
	}
	b := calls[1].res
	if b.OK || !strings.Contains(b.Error, "test: b fails") || len(b.Errors) == 0 || b.SessionID == "" || b.End.IsZero() {
		t.Errorf("OnStep(b) result %+v", b)
	}
	checkOnStepIsManifest(t, f.runDir, calls)
}

// cutAt stops a run (as a crash would, leaving it in flight) when the
// fake receives the nth request of a step, which is never answered.
func cutAt(f *flowFixture, step string, n int) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex // guards seen
	seen := 0
	f.onRequest(func(r *modeltest.Request) bool {
		if stepNamed(r.System) != step {
			return false
		}
		mu.Lock()
		seen++
		hit := seen == n
		mu.Unlock()
		if hit {
			cancel()
		}
		return hit
	})
	return ctx, cancel
}

func TestCutStepIsFinishedEvenIfFrozen(t *testing.T) { // R3.1, R3.10, R5.3
	f := newFlowFixture(t, nil)
	flow := func() *Workflow {
		a := testStep("a")
		a.Frozen = func() bool { _, err := os.Stat(filepath.Join(f.ws, "a.txt")); return err == nil }
		return New(a, testStep("b"))
	}
	ctx, cancel := cutAt(f, "a", 2) // a.txt is written, the step has not ended
	defer cancel()
	if out := flow().Run(ctx, f.runtime(), Options{RunDir: f.runDir}); !out.Interrupted {
		t.Fatalf("first run: %+v", out)
	}
	cut := f.srv.Requests()[1]
	f.onRequest(nil)
	out := flow().Run(context.Background(), f.runtime(), Options{RunDir: f.runDir})
	if !out.Passed || !out.Resumed {
		t.Fatalf("the run after the cut: %+v", out)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 5 || stepNamed(reqs[2].System) != "a" || len(reqs[2].Messages) != len(cut.Messages) {
		t.Fatalf("after the cut: %d requests, the first for %q with %d messages: step a must be finished where it stopped, not skipped as frozen",
			len(reqs), stepNamed(reqs[2].System), len(reqs[2].Messages))
	}
}

func TestStepCutBeforeItsSessionKeepsItsPrompt(t *testing.T) { // R3.1
	f := newFlowFixture(t, nil)
	ctx, cancel := cutAt(f, "a", 1) // the first request: no response, no session id yet
	defer cancel()
	first := testStep("a")
	first.Prompt = "Do a: the task only the first process knew."
	if out := New(first, testStep("b")).Run(ctx, f.runtime(), Options{RunDir: f.runDir}); !out.Interrupted {
		t.Fatalf("first run: %+v", out)
	}
	f.onRequest(nil)
	again := testStep("a")
	again.Prompt = "" // a bare wake does not know the task
	if out := New(again, testStep("b")).Run(context.Background(), f.runtime(), Options{RunDir: f.runDir}); !out.Passed || !out.Resumed {
		t.Fatalf("the run after the cut: %+v", out)
	}
	if got := f.srv.Requests()[1].Messages[0].TextOf(); got != first.Prompt {
		t.Fatalf("step a started again with %q, want the prompt it was cut with", got)
	}
}

func TestResumeSemantics(t *testing.T) { // R3.5
	f := newFlowFixture(t, nil)
	flow := func(continuous bool) *Workflow {
		c := testStep("c")
		c.ResumeFrom, c.Fork = "a", true
		b := testStep("b")
		b.ResumeFrom = "a"
		w := New(testStep("a"), c, b)
		w.Fresh = !continuous
		return w
	}
	byStep := func(from int) map[string][]*modeltest.Request {
		out := map[string][]*modeltest.Request{}
		for _, r := range f.srv.Requests()[from:] {
			out[stepNamed(r.System)] = append(out[stepNamed(r.System)], r)
		}
		return out
	}
	texts := func(r *modeltest.Request) string {
		var s []string
		for _, m := range r.Messages {
			if m.Role == model.User && m.TextOf() != "" {
				s = append(s, m.TextOf())
			}
		}
		return strings.Join(s, " | ")
	}
	lineage := func() map[string]string {
		l, err := ReadLineage(filepath.Join(f.runDir, LineageFile))
		if err != nil {
			t.Fatal(err)
		}
		return l.Steps
	}

	// One run: b continues a's session, c branches it.
	if out := flow(true).Run(context.Background(), f.runtime(), Options{RunDir: f.runDir}); !out.Passed {
		t.Fatalf("run 1: %+v", out)
	}
	l1 := lineage()
	if l1["b"] != l1["a"] || l1["c"] == l1["a"] || l1["c"] == "" {
		t.Fatalf("lineage %v: b must continue a's session, c branch it", l1)
	}
	reqs := byStep(0)
	if got := texts(reqs["c"][0]); got != "Do a. | Do c." {
		t.Errorf("c's first request carries %q, want a's history then c's prompt", got)
	}
	if got := texts(reqs["b"][0]); got != "Do a. | Do b." {
		t.Errorf("b's first request carries %q: the fork must leave a's session untouched", got)
	}

	// Across processes, continuous: every step continues or branches its lineage.
	mark := f.srv.Count()
	if out := flow(true).Run(context.Background(), f.runtime(), Options{RunDir: f.runDir}); !out.Passed {
		t.Fatalf("run 2: %+v", out)
	}
	l2 := lineage()
	if l2["a"] != l1["a"] || l2["b"] != l1["a"] || l2["c"] == l1["c"] || l2["c"] == l1["a"] {
		t.Errorf("lineage after run 2 %v, after run 1 %v", l2, l1)
	}
	reqs = byStep(mark)
	if got := texts(reqs["a"][0]); got != "Do a. | Do b. | Do a." {
		t.Errorf("a's first request of run 2 carries %q, want its session's history", got)
	}

	// Fresh (seed 000's continuous=False): fresh sessions every process.
	mark = f.srv.Count()
	if out := flow(false).Run(context.Background(), f.runtime(), Options{RunDir: f.runDir}); !out.Passed {
		t.Fatalf("run 3: %+v", out)
	}
	reqs = byStep(mark)
	if got := texts(reqs["a"][0]); got != "Do a." {
		t.Errorf("a's first request of a non-continuous run carries %q, want its prompt alone", got)
	}
	if got := texts(reqs["b"][0]); got != "Do a. | Do b." {
		t.Errorf("b's first request of a non-continuous run carries %q, want this run's a", got)
	}
}
