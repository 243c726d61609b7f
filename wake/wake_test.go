package wake

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/mem"
	"github.com/flower-run/flower/workflow"
	"github.com/flower-run/flower/workflow/starter"
)

const fullBrief = "## Goal\ng\n\n## Done when\nd\n\n## Constraints\nc\n\n## Unknowns and assumptions\nu\n"

// history is what a workspace holds before a start: its brief, its runs
// (oldest first) and whether its thread has bound a step.
type history struct {
	brief string
	runs  []store.Run
	bound bool
}

func run(id string, status store.RunStatus, outcome string) store.Run {
	return store.Run{ID: id, Status: status, Outcome: outcome, Task: "task of " + id, Phrase: "phrase of " + id}
}

var (
	inFlight = run("r2", store.RunInFlight, "")
	passed   = run("r1", store.RunFinished, "passed")
	failed   = run("r1", store.RunFinished, "failed")
)

func TestDecide(t *testing.T) { // R3.1, R3.9, R3.10, issue 9 item 7
	tests := []struct {
		name string
		h    history
		o    Options
		want Plan // State and Workspace are not compared
		err  any  // nil, or a pointer to the error type wanted
	}{
		{name: "empty, bare", err: new(*NothingError)},
		{name: "empty, task", o: Options{Phrase: "t"}, want: Plan{Action: Start, Task: "t"}},
		{name: "empty, new", o: Options{Phrase: "t", New: true}, want: Plan{Action: Start, Task: "t"}},
		{name: "unfinished brief, bare", h: history{brief: "## Goal\ng\n"}, err: new(*NothingError)},
		{name: "bound, no brief, bare", h: history{bound: true}, want: Plan{Action: Start}},
		{name: "passed, bare", h: history{brief: fullBrief, runs: []store.Run{passed}, bound: true},
			want: Plan{Action: Pass, Last: passed}},
		{name: "passed, no-restore", h: history{brief: fullBrief, runs: []store.Run{passed}, bound: true},
			o: Options{NoRestore: true}, want: Plan{Action: Start}},
		{name: "passed, phrase", h: history{brief: fullBrief, runs: []store.Run{passed}, bound: true},
			o: Options{Phrase: "more"}, want: Plan{Action: Start, Phrase: "more"}},
		{name: "failed, bare", h: history{brief: fullBrief, runs: []store.Run{failed}, bound: true},
			want: Plan{Action: Start}},
		{name: "cut, bare", h: history{brief: fullBrief, runs: []store.Run{passed, inFlight}, bound: true},
			want: Plan{Action: Finish, Cut: &inFlight}},
		{name: "cut, phrase on confirmed brief", h: history{brief: fullBrief, runs: []store.Run{inFlight}},
			o: Options{Phrase: "more"}, want: Plan{Action: FinishThenStart, Cut: &inFlight, Phrase: "more"}},
		{name: "cut in clarify, phrase", h: history{runs: []store.Run{inFlight}},
			o: Options{Phrase: "words"}, want: Plan{Action: Finish, Cut: &inFlight, Said: "words"}},
		{name: "cut, no-restore", h: history{brief: fullBrief, runs: []store.Run{inFlight}},
			o: Options{NoRestore: true}, want: Plan{Action: Start}},
		{name: "cut, --run", h: history{runs: []store.Run{inFlight}},
			o: Options{RunID: "r2"}, want: Plan{Action: Finish, Cut: &inFlight}},
		{name: "--run of a finished run", h: history{brief: fullBrief, runs: []store.Run{failed}},
			o: Options{RunID: "r1"}, err: new(*NoRunError)},
		{name: "--run unknown", o: Options{RunID: "nope"}, err: new(*NoRunError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			ws, s := seed(t, tt.h)
			got, err := Decide(ctx, s, ws, tt.o)
			if tt.err != nil {
				if !errors.As(err, tt.err) {
					t.Fatalf("got %v, %v; want a %T", got.Action, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !samePlan(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", strip(got), strip(tt.want))
			}
		})
	}
}

func TestCheck(t *testing.T) { // before the lock: nothing written
	ws := t.TempDir()
	for _, tt := range []struct {
		o        Options
		hasStore bool
		want     error
	}{
		{o: Options{New: true}, want: ErrNoTask},
		{o: Options{}, want: &NothingError{Workspace: ws}},
		{o: Options{}, hasStore: true},
		{o: Options{Phrase: "t"}},
		{o: Options{RunID: "r"}},
	} {
		err := Check(ws, tt.hasStore, tt.o)
		if (err == nil) != (tt.want == nil) || (err != nil && err.Error() != tt.want.Error()) {
			t.Errorf("Check(%+v, store %v) = %v, want %v", tt.o, tt.hasStore, err, tt.want)
		}
	}
}

func TestPrepareNewArchivesFirst(t *testing.T) { // R3.13
	ctx := context.Background()
	ws, s := seed(t, history{brief: fullBrief, runs: []store.Run{inFlight}, bound: true})
	p, err := Prepare(ctx, s, t.TempDir(), ws, Options{Phrase: "other", New: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p.Action != Start || p.Task != "other" || p.Cut != nil || p.State.Waking {
		t.Errorf("after --new: %+v", strip(p))
	}
	if _, err := os.Stat(filepath.Join(ws, starter.BriefPath)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the brief was not archived: %v", err)
	}
	if r, _, _ := s.Run(ctx, inFlight.ID); r.Status != store.RunDiscarded {
		t.Errorf("the cut run is %s, want discarded", r.Status)
	}
}

// seed builds a workspace and a store holding history h.
func seed(t *testing.T, h history) (string, *mem.Store) {
	t.Helper()
	ctx := context.Background()
	ws, s := t.TempDir(), mem.New()
	if h.brief != "" {
		p := filepath.Join(ws, starter.BriefPath)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(h.brief), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range h.runs {
		r.Workspace = ws
		if err := s.Commit(ctx, store.Batch{Run: &r}); err != nil {
			t.Fatal(err)
		}
	}
	if h.bound {
		b := store.Batch{Wake: ws, Bind: []store.Binding{{Workspace: ws, Step: "work", Session: "s1"}}}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	return ws, s
}

// strip leaves what a decision is: the state and the workspace are inputs.
func strip(p Plan) Plan {
	p.State, p.Workspace = starter.State{}, ""
	if p.Cut != nil {
		c := *p.Cut
		c.Workspace, c.Created, c.Updated = "", time.Time{}, time.Time{}
		p.Cut = &c
	}
	p.Last.Workspace, p.Last.Created, p.Last.Updated = "", time.Time{}, time.Time{}
	return p
}

func samePlan(got, want Plan) bool {
	g, w := strip(got), strip(want)
	if (g.Cut == nil) != (w.Cut == nil) || (g.Cut != nil && g.Cut.ID != w.Cut.ID) {
		return false
	}
	g.Cut, w.Cut = nil, nil
	return g.Action == w.Action && g.Last.ID == w.Last.ID && g.Said == w.Said && g.Task == w.Task && g.Phrase == w.Phrase
}

// call is one Flow call: the arguments a run's workflow was built with.
type call struct{ task, said, phrase string }

func TestDriveFinishesThenStarts(t *testing.T) { // R3.1: a phrase after a cut run gets its own run
	ctx := context.Background()
	ws, s := seed(t, history{brief: fullBrief, runs: []store.Run{inFlight}, bound: true})
	p, err := Decide(ctx, s, ws, Options{Phrase: "more"})
	if err != nil || p.Action != FinishThenStart {
		t.Fatalf("Decide: %v, %v", p.Action, err)
	}
	rt, err := agent.New(agent.Options{Workspace: ws, Store: s,
		Provider: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: "http://127.0.0.1:1"})}) // never called: no steps
	if err != nil {
		t.Fatal(err)
	}
	var calls []call
	flow := func(task, said, phrase string) *workflow.Workflow {
		calls = append(calls, call{task, said, phrase})
		return workflow.New()
	}
	out := p.Drive(ctx, rt, workflow.Options{RunDir: t.TempDir()}, flow)
	if out.Err != nil || !out.Passed {
		t.Fatalf("Drive: %+v", out)
	}
	want := []call{{inFlight.Task, "", inFlight.Phrase}, {"", "", "more"}}
	if !slices.Equal(calls, want) {
		t.Errorf("flows built %v, want %v", calls, want)
	}
	runs, err := s.Runs(ctx, ws)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	if runs[0].ID != inFlight.ID || runs[0].Status != store.RunFinished || runs[1].Phrase != "more" || runs[1].Task != "" {
		t.Errorf("runs after the wake: %+v", runs)
	}
	if l, _ := s.Lineage(ctx, ws); l.Woke != 2 {
		t.Errorf("wakes %d, want 2: finishing and starting are one wake", l.Woke)
	}
}

func TestDriveRefusesAPass(t *testing.T) { // a Pass costs nothing: CountWake, not Drive
	out := Plan{Action: Pass}.Drive(context.Background(), nil, workflow.Options{}, nil)
	if out.Err == nil {
		t.Error("Drive ran a Pass plan")
	}
}

// TestPrepareKeepsThePhrase: the phrase typed on a wake with a cut run is
// in the store when Prepare returns, so a kill at any later point (here:
// the plan is dropped unused) leaves it for the next bare wake, which
// finishes the cut run and then gives the phrase its run (issue 22 item 1).
func TestPrepareKeepsThePhrase(t *testing.T) {
	ctx := context.Background()
	ws, s := seed(t, history{brief: fullBrief, runs: []store.Run{inFlight}, bound: true})
	if _, err := Prepare(ctx, s, t.TempDir(), ws, Options{Phrase: "more"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	// killed here: the next wake is bare
	p, err := Prepare(ctx, s, t.TempDir(), ws, Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p.Action != FinishThenStart || p.Cut == nil || p.Cut.ID != inFlight.ID || len(p.Queue) != 1 || p.Queue[0].Phrase != "more" {
		t.Fatalf("the bare wake after the kill: %+v", strip(p))
	}
	rt, err := agent.New(agent.Options{Workspace: ws, Store: s,
		Provider: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: "http://127.0.0.1:1"})}) // never called: no steps
	if err != nil {
		t.Fatal(err)
	}
	var calls []call
	flow := func(task, said, phrase string) *workflow.Workflow {
		calls = append(calls, call{task, said, phrase})
		return workflow.New()
	}
	if out := p.Drive(ctx, rt, workflow.Options{RunDir: t.TempDir()}, flow); out.Err != nil || !out.Passed {
		t.Fatalf("Drive: %+v", out)
	}
	if want := []call{{inFlight.Task, "", inFlight.Phrase}, {"", "", "more"}}; !slices.Equal(calls, want) {
		t.Errorf("flows built %v, want %v", calls, want)
	}
	runs, _ := s.Runs(ctx, ws)
	if len(runs) != 2 || runs[1].After != inFlight.ID || runs[0].Status != store.RunFinished || runs[1].Status != store.RunFinished {
		t.Errorf("runs after the wake: %+v", runs)
	}
}

// TestPrepareKeepsTheSaid: words for a cut run's unfinished clarification
// are added to that run before anything else, and reach it on every later
// wake until it finishes.
func TestPrepareKeepsTheSaid(t *testing.T) {
	ctx := context.Background()
	ws, s := seed(t, history{runs: []store.Run{inFlight}})
	if _, err := Prepare(ctx, s, t.TempDir(), ws, Options{Phrase: "use Go"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(ctx, s, t.TempDir(), ws, Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p.Action != Finish || p.Said != "use Go" {
		t.Fatalf("the bare wake after the kill: %v said %q", p.Action, p.Said)
	}
	if r, _, _ := s.Run(ctx, inFlight.ID); r.Said != "use Go" {
		t.Errorf("the cut run keeps %q", r.Said)
	}
}

// TestPrepareKeepsTheTask: the task of a new thread is in the store, as a
// run in flight, when Prepare returns: before the banner is printed. A
// kill at any later point leaves it for the next bare wake, which finishes
// that run with the task. The random-kill soak found the task lost by a
// kill just after "-> starting in" (3 of 46 kills on the old code).
func TestPrepareKeepsTheTask(t *testing.T) { // issue 22 item 1
	ctx := context.Background()
	ws, s := seed(t, history{})
	p, err := Prepare(ctx, s, t.TempDir(), ws, Options{Phrase: "write a greeting file"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p.Action != Start || p.New == nil || p.New.Task != "write a greeting file" {
		t.Fatalf("the first start: %+v", strip(p))
	}
	// killed here: the next wake is bare
	again, err := Prepare(ctx, s, t.TempDir(), ws, Options{}, time.Now())
	if err != nil {
		t.Fatalf("the bare wake after the kill: %v", err)
	}
	if again.Action != Finish || again.Cut == nil || again.Cut.ID != p.New.ID || again.Cut.Task != "write a greeting file" {
		t.Fatalf("the bare wake after the kill: %+v", strip(again))
	}
	// Without a kill, Drive drives the run Prepare stored: no second run.
	rt, err := agent.New(agent.Options{Workspace: ws, Store: s,
		Provider: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: "http://127.0.0.1:1"})}) // never called: no steps
	if err != nil {
		t.Fatal(err)
	}
	flow := func(task, said, phrase string) *workflow.Workflow { return workflow.New() }
	if out := p.Drive(ctx, rt, workflow.Options{RunDir: t.TempDir()}, flow); out.Err != nil || !out.Passed || out.Run != p.New.ID {
		t.Fatalf("Drive: %+v, want run %s passed", out, p.New.ID)
	}
	if runs, _ := s.Runs(ctx, ws); len(runs) != 1 || runs[0].Status != store.RunFinished || runs[0].Task != "write a greeting file" {
		t.Errorf("runs after the wake: %+v", runs)
	}
}
