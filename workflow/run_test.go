package workflow

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/tool"
)

// Issue 9: the run state is the store's. These tests read it back with a
// second handle on the same file, as another process would.

func (f *flowFixture) runs() []store.Run {
	f.t.Helper()
	s, err := sqlite.Open(filepath.Join(f.runDir, "sessions.db"))
	if err != nil {
		f.t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(context.Background(), f.ws)
	if err != nil {
		f.t.Fatal(err)
	}
	return runs
}

func (f *flowFixture) commit(b store.Batch) {
	f.t.Helper()
	s, err := sqlite.Open(filepath.Join(f.runDir, "sessions.db"))
	if err != nil {
		f.t.Fatal(err)
	}
	defer s.Close()
	if err := s.Commit(context.Background(), b); err != nil {
		f.t.Fatal(err)
	}
}

// TestRunAndTaskAreOneCommit: a run cut at its very first request is in
// the store with its task, and its first step is bound to the session
// that holds the step's prompt (both commits precede the request).
func TestRunAndTaskAreOneCommit(t *testing.T) { // issue 9, R3.1
	f := newFlowFixture(t, nil)
	ctx, cancel := cutAt(f, "a", 1)
	defer cancel()
	out := New(testStep("a"), testStep("b")).Run(ctx, f.runtime(), Options{RunDir: f.runDir, Task: "the task"})
	if !out.Interrupted {
		t.Fatalf("outcome %+v", out)
	}
	runs := f.runs()
	if len(runs) != 1 {
		t.Fatalf("runs %+v", runs)
	}
	r := runs[0]
	if r.Status != store.RunInFlight || r.Task != "the task" || r.Step != "a" || r.Prompt != "" || r.Session == "" {
		t.Errorf("the cut run as stored: %+v", r)
	}
}

// TestOutcomeNamesWhatHappened: the outcome carries the wake count, the
// sessions of every step and the row of a failed step (seed 000).
func TestOutcomeNamesWhatHappened(t *testing.T) { // issue 9 item 9
	f := newFlowFixture(t, map[string]bool{"b": true})
	out := New(testStep("a"), testStep("b")).Run(context.Background(), f.runtime(), Options{RunDir: f.runDir})
	if out.Err == nil || out.Step != "b#retry2" && out.Step != "b" {
		t.Fatalf("outcome %+v: want step b named", out)
	}
	if out.Woke != 1 || out.Sessions["a"] == "" || out.Sessions["b"] == "" {
		t.Errorf("outcome woke %d sessions %v", out.Woke, out.Sessions)
	}
	if r := f.runs()[0]; r.Status != store.RunFinished || r.Outcome != "failed" {
		t.Errorf("the run as stored: %s/%s", r.Status, r.Outcome)
	}
}

// TestDeadSessionDropsOnlyItsStep: a lineage session the store does not
// hold starts that step afresh, silently; the other steps stay connected
// and the wake count goes on (seed 000's per-step validation).
func TestDeadSessionDropsOnlyItsStep(t *testing.T) { // issue 9 item 8, R3.3
	f := newFlowFixture(t, nil)
	flow := func() *Workflow { return New(testStep("a"), testStep("b")) }
	if out := flow().Run(context.Background(), f.runtime(), Options{RunDir: f.runDir}); !out.Passed {
		t.Fatalf("run 1: %+v", out)
	}
	f.commit(store.Batch{Bind: []store.Binding{{Workspace: f.ws, Step: "b", Session: "gone-0000"}}})
	var warned []string
	sink := func(e event.Event) {
		if e.Kind == event.Error {
			warned = append(warned, e.Text)
		}
	}
	mark := f.srv.Count()
	out := flow().Run(context.Background(), f.runtime(), Options{RunDir: f.runDir, Sink: sink})
	if !out.Passed || out.Woke != 2 {
		t.Fatalf("run 2: %+v", out)
	}
	reqs := f.srv.Requests()[mark:]
	var a, b *modeltest.Request
	for _, r := range reqs {
		switch stepNamed(r.System) {
		case "a":
			a = firstOf(a, r)
		case "b":
			b = firstOf(b, r)
		}
	}
	if a == nil || len(a.Messages) < 3 {
		t.Errorf("step a did not continue its session")
	}
	if b == nil || len(b.Messages) != 1 {
		t.Errorf("step b, whose session is gone, did not start afresh")
	}
	// Silently, as seed 000 says (R3.3 "never an error"): no error event.
	if len(warned) != 0 {
		t.Errorf("errors %q: a dropped step session is not an error", warned)
	}
}

func firstOf(have, r *modeltest.Request) *modeltest.Request {
	if have != nil {
		return have
	}
	return r
}

// TestStepEventsCarryIndexTotalResumedWoke: seed 004's step payload.
func TestStepEventsCarryIndexTotalResumedWoke(t *testing.T) { // issue 9 item 8
	f := newFlowFixture(t, nil)
	var steps []map[string]any
	var texts []string
	sink := func(e event.Event) {
		if e.Kind == event.Step {
			steps, texts = append(steps, e.Payload), append(texts, e.Text)
		}
	}
	w := New(testStep("a"), testStep("b"))
	w.Judge = testJudge("b")
	if out := w.Run(context.Background(), f.runtime(), Options{RunDir: f.runDir, Sink: sink}); !out.Passed {
		t.Fatalf("outcome %+v", out)
	}
	if len(steps) != 3 {
		t.Fatalf("step events %v", steps)
	}
	for i, p := range steps {
		if p["index"] != i+1 || p["total"] != 3 || p["woke"] != 1 || p["resumed"] != false {
			t.Errorf("step event %d payload %v", i, p)
		}
	}
	// The text is the step's name, as seed 004 has it; the title line a
	// terminal shows is the payload's header (issue 22 item 5).
	wantText := []string{"a", "b", "b·judge#1"}
	wantHeader := []string{"── 1/3 a (new session)", "── 2/3 b (new session)", "── 3/3 judge round 1 (fresh eyes)"}
	for i := range steps {
		if texts[i] != wantText[i] || steps[i]["header"] != wantHeader[i] {
			t.Errorf("step event %d: text %q header %q, want %q and %q", i, texts[i], steps[i]["header"], wantText[i], wantHeader[i])
		}
	}
}

// TestDeadlineLeavesTheRunInFlight: a run stopped by its context's
// deadline is neither retried with the dead context nor recorded failed:
// the next wake finishes it (issue 9: typed outcomes).
func TestDeadlineLeavesTheRunInFlight(t *testing.T) { // issue 9 item 5
	f := newFlowFixture(t, nil)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	f.onRequest(func(r *modeltest.Request) bool {
		if stepNamed(r.System) == "b" {
			cancel(context.DeadlineExceeded)
			return true
		}
		return false
	})
	flow := func() *Workflow { return New(testStep("a"), testStep("b")) }
	out := flow().Run(ctx, f.runtime(), Options{RunDir: f.runDir})
	if !out.Interrupted || out.Passed {
		t.Fatalf("outcome %+v", out)
	}
	r := f.runs()[0]
	if r.Status != store.RunInFlight || r.Step != "b" {
		t.Fatalf("the stopped run as stored: %+v", r)
	}
	rows, err := ReadManifest(filepath.Join(f.runDir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if strings.Contains(row.Step, "#retry") || row.Step == "b" && row.Error != context.DeadlineExceeded.Error() {
			t.Errorf("row %s %q: a stopped step is neither retried nor failed for another reason", row.Step, row.Error)
		}
	}
	f.onRequest(nil)
	again := flow().Run(context.Background(), f.runtime(), Options{RunDir: f.runDir})
	if !again.Passed || !again.Resumed || again.Run != r.ID {
		t.Fatalf("the wake after the deadline: %+v, want run %s finished", again, r.ID)
	}
}

// failBegin is a store that fails the commit that begins step, once: the
// process "dies" between the end of the step before and that step's start.
type failBegin struct {
	store.Store
	step   string
	failed bool
}

func (s *failBegin) Commit(ctx context.Context, b store.Batch) error {
	if b.Run != nil && b.Run.Step == s.step && !s.failed {
		s.failed = true
		return errors.New("test: the disk is gone")
	}
	return s.Store.Commit(ctx, b)
}

// TestNotContinuousRunFindsItsStepsAfterACrash: in a workflow that is not
// continuous, a step that continues an earlier step of the same run
// (ResumeFrom) finds that step's session when a later process finishes
// the run: it is in the run's stored rows, not only in the memory of the
// process that ran it.
func TestNotContinuousRunFindsItsStepsAfterACrash(t *testing.T) { // issue 9, R3.5
	f := newFlowFixture(t, nil)
	flow := func() *Workflow {
		b := testStep("b")
		b.ResumeFrom = "a"
		w := New(testStep("a"), b)
		w.Fresh = true
		return w
	}
	rt := f.runtime()
	broken, err := agent.New(agent.Options{Workspace: f.ws, Store: &failBegin{Store: rt.Store(), step: "b"},
		Provider: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: f.srv.URL}), Tools: []tool.Tool{VerdictTool{}}})
	if err != nil {
		t.Fatal(err)
	}
	if out := flow().Run(context.Background(), broken, Options{RunDir: f.runDir}); out.Err == nil {
		t.Fatalf("first run: %+v, want b's start to fail", out)
	}
	out := flow().Run(context.Background(), f.runtime(), Options{RunDir: f.runDir})
	if !out.Passed || !out.Resumed {
		t.Fatalf("the next process: %+v", out)
	}
	var b *modeltest.Request
	for _, r := range f.srv.Requests() {
		if stepNamed(r.System) == "b" {
			b = r
			break
		}
	}
	if b == nil || len(b.Messages) < 3 {
		t.Fatalf("step b started afresh: it must continue step a's session of the same run")
	}
}

// TestStructLiteralIsContinuous: a Workflow written as a struct literal
// continues its steps' sessions across processes, as seed 000's
// Workflow(...) does with continuous defaulting to true (R3.5). It failed
// while the field was Continuous, false in a literal.
func TestStructLiteralIsContinuous(t *testing.T) { // issue 22 item 5, R3.5
	f := newFlowFixture(t, nil)
	flow := func() *Workflow { return &Workflow{Steps: []Step{testStep("a")}} }
	first := flow().Run(context.Background(), f.runtime(), Options{RunDir: f.runDir})
	if !first.Passed {
		t.Fatalf("run 1: %+v", first)
	}
	mark := f.srv.Count()
	second := flow().Run(context.Background(), f.runtime(), Options{RunDir: f.runDir})
	if !second.Passed || second.Woke != 2 {
		t.Fatalf("run 2: %+v", second)
	}
	if second.Sessions["a"] != first.Sessions["a"] {
		t.Errorf("step a ran in session %s, then %s: want the same one", first.Sessions["a"], second.Sessions["a"])
	}
	if r := f.srv.Requests()[mark]; len(r.Messages) < 3 {
		t.Errorf("step a's first request of run 2 has %d messages: want its session's history", len(r.Messages))
	}
}
