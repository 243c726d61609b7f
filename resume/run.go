package resume

import (
	"errors"
	"fmt"

	"github.com/flower-run/flower/store"
)

// The run level: what the next start of flower does with a workspace's
// runs, and how a cut run's step in flight goes on. Pure functions of the
// stored run records (DESIGN.md §3.4), like Session is of the entries.

// Runs is where a workspace's runs stand for the next wake.
type Runs struct {
	// Finish is the in-flight run this wake finishes; nil: none.
	Finish *store.Run
	// Last is the newest run of the workspace, nil when it has none.
	Last *store.Run
}

// Passed reports whether nothing is in flight and the newest run passed
// its verdict: a bare wake has nothing to do.
func (p Runs) Passed() bool {
	return p.Finish == nil && p.Last != nil && p.Last.Status == store.RunFinished && p.Last.Outcome == "passed"
}

// ErrNoRun is returned when the run asked for is not in flight.
var ErrNoRun = errors.New("no such run in flight")

// PlanRuns plans from the runs of a workspace, oldest first: the run named
// id (which must be in flight), else the newest in flight, else none when
// noRestore asks for a new run.
func PlanRuns(runs []store.Run, id string, noRestore bool) (Runs, error) {
	var p Runs
	if n := len(runs); n > 0 {
		p.Last = &runs[n-1]
	}
	if id != "" {
		for i := range runs {
			if runs[i].ID == id && runs[i].Status == store.RunInFlight {
				p.Finish = &runs[i]
				return p, nil
			}
		}
		return p, fmt.Errorf("%w: %s (flower ps lists the runs in flight)", ErrNoRun, id)
	}
	if noRestore {
		return p, nil
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Status == store.RunInFlight {
			p.Finish = first(runs, &runs[i])
			break
		}
	}
	return p, nil
}

// first walks back from a queued run to the run it waits for while that
// one is in flight: a wake that queued a phrase behind a cut run and was
// killed finishes the cut run first, as it would have.
func first(runs []store.Run, r *store.Run) *store.Run {
	for range runs { // bounded: a cycle of After cannot loop forever
		prev := inFlight(runs, r.After)
		if prev == nil {
			break
		}
		r = prev
	}
	return r
}

func inFlight(runs []store.Run, id string) *store.Run {
	if id == "" {
		return nil
	}
	for i := range runs {
		if runs[i].ID == id && runs[i].Status == store.RunInFlight {
			return &runs[i]
		}
	}
	return nil
}

// Queued lists the in-flight runs queued behind run id (After), each
// behind the one before, in the order a wake drives them.
func Queued(runs []store.Run, id string) []store.Run {
	var q []store.Run
	for range runs {
		next := -1
		for i := range runs {
			if runs[i].After == id && id != "" && runs[i].Status == store.RunInFlight {
				next = i
				break
			}
		}
		if next < 0 {
			break
		}
		q = append(q, runs[next])
		id = runs[next].ID
	}
	return q
}

// Step is how a run's step in flight goes on after a crash or a stop.
type Step struct {
	Name, Row string
	// Session is the session to continue: the step's prompt reached it.
	// When it is empty the step starts again as it was begun: in a new
	// session, or continuing (or forking) From, with Prompt.
	Session string
	From    string
	Fork    bool
	Prompt  string
}

// JudgeStep is the name a run gives its judge round in flight.
const JudgeStep = "·judge"

// StepInFlight returns the step a run was cut in, if any.
func StepInFlight(r store.Run) (Step, bool) {
	if r.Step == "" {
		return Step{}, false
	}
	st := Step{Name: r.Step, Row: r.Row, Session: r.Session}
	if st.Session == "" {
		st.From, st.Fork, st.Prompt = r.From, r.Fork, r.Prompt
	}
	return st, true
}

// Verdict returns the verdict a run holds but has not acted on: the judge
// round ended, and neither the run's end nor the rework round's start was
// committed.
func Verdict(r store.Run) (pass bool, findings string, ok bool) {
	if r.Verdict == "" || r.Step == JudgeStep {
		return false, "", false
	}
	return r.Verdict == "pass", r.Findings, true
}
