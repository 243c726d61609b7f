package resume_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
)

func runOf(id string, status store.RunStatus, outcome string) store.Run {
	return store.Run{ID: id, Workspace: "/ws", Status: status, Outcome: outcome}
}

func queued(id, after string) store.Run {
	r := runOf(id, store.RunInFlight, "")
	r.After = after
	return r
}

func TestQueued(t *testing.T) { // issue 22 item 1
	runs := []store.Run{queued("b", "a"), runOf("a", store.RunInFlight, ""), queued("c", "b"), queued("z", "y")}
	var got []string
	for _, r := range resume.Queued(runs, "a") {
		got = append(got, r.ID)
	}
	if strings.Join(got, " ") != "b c" {
		t.Errorf("queued behind a: %v, want b c", got)
	}
	if q := resume.Queued(runs, ""); q != nil {
		t.Errorf("queued behind no run: %v", q)
	}
}

func TestPlanRuns(t *testing.T) { // issue 9: run level
	inFlight := func(id string) store.Run { return runOf(id, store.RunInFlight, "") }
	passed := runOf("p", store.RunFinished, "passed")
	failed := runOf("f", store.RunFinished, "failed")
	discarded := runOf("d", store.RunDiscarded, "discarded")
	tests := []struct {
		name      string
		runs      []store.Run
		id        string
		noRestore bool
		finish    string // "": none
		passed    bool
		err       error
	}{
		{"a new workspace", nil, "", false, "", false, nil},
		{"the newest in flight", []store.Run{inFlight("a"), passed, inFlight("b")}, "", false, "b", false, nil},
		{"an older one in flight", []store.Run{inFlight("a"), passed}, "", false, "a", false, nil},
		{"--no-restore leaves it", []store.Run{inFlight("a")}, "", true, "", false, nil},
		{"--run ID", []store.Run{inFlight("a"), inFlight("b")}, "a", false, "a", false, nil},
		{"--run ID wins over --no-restore", []store.Run{inFlight("a")}, "a", true, "a", false, nil},
		{"--run of a finished run", []store.Run{passed}, "p", false, "", true, resume.ErrNoRun},
		{"--run of an unknown run", nil, "x", false, "", false, resume.ErrNoRun},
		{"after a pass", []store.Run{failed, passed}, "", false, "", true, nil},
		{"after a failure", []store.Run{passed, failed}, "", false, "", false, nil},
		{"after a discard", []store.Run{passed, discarded}, "", false, "", false, nil},
		{"a pass with a run in flight before it", []store.Run{inFlight("a"), passed}, "", false, "a", false, nil},
		// issue 22 item 1: a phrase queued behind a cut run waits for it.
		{"queued behind a cut run", []store.Run{inFlight("a"), queued("q", "a")}, "", false, "a", false, nil},
		{"queued behind queued", []store.Run{inFlight("a"), queued("q", "a"), queued("r", "q")}, "", false, "a", false, nil},
		{"queued behind a finished run", []store.Run{passed, queued("q", "p")}, "", false, "q", false, nil},
		{"an After cycle ends", []store.Run{queued("x", "y"), queued("y", "x")}, "", false, "y", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := resume.PlanRuns(tt.runs, tt.id, tt.noRestore)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			got := ""
			if p.Finish != nil {
				got = p.Finish.ID
			}
			if got != tt.finish || p.Passed() != tt.passed {
				t.Errorf("finish %q passed %v, want %q %v", got, p.Passed(), tt.finish, tt.passed)
			}
		})
	}
}

func TestStepInFlight(t *testing.T) { // issue 9: how a cut step goes on
	tests := []struct {
		name string
		run  store.Run
		want resume.Step
		ok   bool
	}{
		{"between steps", store.Run{Done: []string{"clarify"}}, resume.Step{}, false},
		{"begun, prompt not yet in a session", store.Run{Step: "clarify", Row: "clarify", Prompt: "The task"},
			resume.Step{Name: "clarify", Row: "clarify", Prompt: "The task"}, true},
		{"begun connected, prompt not yet in it", store.Run{Step: "work", Row: "work", From: "s1", Prompt: "go on"},
			resume.Step{Name: "work", Row: "work", From: "s1", Prompt: "go on"}, true},
		{"forked", store.Run{Step: "c", Row: "c", From: "s1", Fork: true, Prompt: "branch"},
			resume.Step{Name: "c", Row: "c", From: "s1", Fork: true, Prompt: "branch"}, true},
		{"bound: the prompt is in the session", store.Run{Step: "work", Row: "work#round2", From: "s1", Session: "s1"},
			resume.Step{Name: "work", Row: "work#round2", Session: "s1"}, true},
		{"a judge round", store.Run{Step: resume.JudgeStep, Row: "work·judge#1", Session: "j1", Judge: "j1"},
			resume.Step{Name: resume.JudgeStep, Row: "work·judge#1", Session: "j1"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := resume.StepInFlight(tt.run)
			if ok != tt.ok || !cmp.Equal(got, tt.want) {
				t.Errorf("StepInFlight = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestVerdict(t *testing.T) { // issue 9: a verdict given, not yet acted on
	tests := []struct {
		run      store.Run
		pass, ok bool
	}{
		{store.Run{}, false, false},
		{store.Run{Verdict: "pass", Findings: "ok"}, true, true},
		{store.Run{Verdict: "fail", Findings: "no"}, false, true},
		{store.Run{Verdict: "pass", Step: resume.JudgeStep}, false, false}, // a new round is in flight
	}
	for _, tt := range tests {
		pass, _, ok := resume.Verdict(tt.run)
		if pass != tt.pass || ok != tt.ok {
			t.Errorf("Verdict(%+v) = %v, %v; want %v, %v", tt.run, pass, ok, tt.pass, tt.ok)
		}
	}
}
