// Package wake decides and drives what one start of flower does in a
// workspace (R3.1): nothing to continue, nothing left to do after a passed
// run, finish the run a crash cut, start a new run, or both. It is shared
// by every front end (the terminal, flower serve) and knows none of them:
// the caller opens the store, builds the runtime and says which workflow a
// run gets (a Flow), so an embedder can drive its own.
//
// A start goes: Check (before the run dir is locked), Prepare (archive on
// New, then Decide), then CountWake for a Pass or Plan.Drive otherwise.
package wake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow"
	"github.com/flower-run/flower/workflow/starter"
)

// Options are what the person asked of this start.
type Options struct {
	// Phrase is the words typed on the wake: the task of a new thread, or
	// words added to a thread whose brief is confirmed.
	Phrase string
	// New archives the thread first, then starts Phrase afresh (--new).
	New bool
	// NoRestore leaves a cut run as it is and starts a new run.
	NoRestore bool
	// RunID finishes that in-flight run rather than the newest (--run).
	RunID string
}

// ErrNoTask is a New start without the new task.
var ErrNoTask = errors.New("a new thread needs its task")

// NothingError is a start with nothing to continue and no task.
type NothingError struct{ Workspace string }

func (e *NothingError) Error() string { return "nothing to continue in " + e.Workspace }

// NoRunError is a RunID that names no run in flight in the workspace.
type NoRunError struct{ ID, Workspace string }

func (e *NoRunError) Error() string {
	return fmt.Sprintf("run %s: no such run in flight in %s", e.ID, e.Workspace)
}

// Action is what a start does.
type Action int

const (
	// Pass does nothing but count the wake: the newest run passed its
	// verdict and the person asked for nothing new, so it costs nothing.
	Pass Action = iota + 1
	// Finish drives the cut run to its end with its own task and phrase.
	Finish
	// Start begins a new run.
	Start
	// FinishThenStart finishes the cut run, then gives the phrase typed on
	// this wake a run of its own.
	FinishThenStart
)

func (a Action) String() string {
	switch a {
	case Pass:
		return "pass"
	case Finish:
		return "finish"
	case Start:
		return "start"
	case FinishThenStart:
		return "finish-then-start"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Plan is the decision for one start.
type Plan struct {
	Action    Action
	Workspace string
	State     starter.State // what the start continues, read before it
	Cut       *store.Run    // Finish, FinishThenStart: the run to finish
	Last      store.Run     // Pass: the run that passed
	// Said is the words typed on this wake that reach the cut run's
	// unfinished clarification (R3.10).
	Said string
	// Task and Phrase are the new run's: the task of a new thread, or the
	// phrase added to a confirmed brief (R3.9).
	Task, Phrase string
	// Queue are the runs queued behind Cut by the phrases of earlier wakes
	// (store.Run.After), driven after it in this order; Prepare queues
	// this wake's phrase there too, durable before anything else happens.
	Queue []store.Run
	// New is the run Prepare stored for Start with the new run's task or
	// phrase, before anything is printed: a kill after the banner finds
	// it in flight, and the next wake finishes it. Drive drives it.
	New *store.Run
}

// Check refuses, before the run dir is locked or anything is written, a
// start that can do nothing: New without a task, or no task and nothing
// to continue. hasStore says whether the run dir holds a store.
func Check(ws string, hasStore bool, o Options) error {
	if o.New && o.Phrase == "" {
		return ErrNoTask
	}
	if !o.New && o.Phrase == "" && o.RunID == "" && !hasStore && !starter.WakeState(ws, nil).Waking {
		return &NothingError{Workspace: ws}
	}
	return nil
}

// Prepare archives the thread when o.New, then decides. The caller holds
// the run dir's lock (store/sqlite, Dirs): archiving must not race another
// driver of the thread.
func Prepare(ctx context.Context, s store.Store, runDir, ws string, o Options, now time.Time) (Plan, error) {
	if o.New {
		if o.Phrase == "" {
			return Plan{}, ErrNoTask
		}
		if _, err := starter.Archive(ctx, s, runDir, ws, now); err != nil {
			return Plan{}, err
		}
	}
	p, err := Decide(ctx, s, ws, o)
	if err != nil {
		return p, err
	}
	return p, p.keep(ctx, s, now)
}

// keep makes the words typed on this wake durable before anything else
// happens (issue 22 item 1): the task or phrase of a new run is stored as
// that run, in flight; a phrase for a run of its own is queued behind the
// cut run; words for its unfinished clarification are added to it. A kill
// at any later point finds them in the store.
func (p *Plan) keep(ctx context.Context, s store.Store, now time.Time) error {
	switch {
	case p.Cut == nil && p.Action == Start && (p.Task != "" || p.Phrase != ""):
		r := store.Run{ID: workflow.RunID(now), Workspace: p.Workspace, Status: store.RunInFlight,
			Task: p.Task, Phrase: p.Phrase, Created: now, Updated: now}
		if err := s.Commit(ctx, store.Batch{Run: &r}); err != nil {
			return fmt.Errorf("keep the task %q: %w", p.Task+p.Phrase, err)
		}
		p.New = &r
		return nil
	case p.Cut == nil:
		return nil
	case p.Phrase != "" || p.Task != "":
		after := p.Cut.ID
		if n := len(p.Queue); n > 0 {
			after = p.Queue[n-1].ID
		}
		q := store.Run{ID: workflow.RunID(now), Workspace: p.Workspace, Status: store.RunInFlight,
			Task: p.Task, Phrase: p.Phrase, After: after, Created: now, Updated: now}
		if err := s.Commit(ctx, store.Batch{Run: &q}); err != nil {
			return fmt.Errorf("keep the phrase %q: %w", p.Phrase, err)
		}
		p.Queue, p.Task, p.Phrase = append(p.Queue, q), "", ""
	case p.Said != "":
		cut := *p.Cut
		cut.Said = strings.TrimSpace(cut.Said + "\n\n" + p.Said)
		cut.Updated = now
		if err := s.Commit(ctx, store.Batch{Run: &cut}); err != nil {
			return fmt.Errorf("keep the words %q: %w", p.Said, err)
		}
		p.Cut = &cut
	}
	if p.Cut.Said != "" {
		p.Said = p.Cut.Said
	}
	return nil
}

// Decide reads the workspace's notes and the store, and says what this
// start does. It writes nothing. With o.New the thread is expected to be
// archived already (Prepare does it).
func Decide(ctx context.Context, s store.Store, ws string, o Options) (Plan, error) {
	st := starter.WakeState(ws, s)
	runs, err := s.Runs(ctx, ws)
	if err != nil {
		return Plan{}, fmt.Errorf("read runs: %w", err)
	}
	rp, err := resume.PlanRuns(runs, o.RunID, o.NoRestore)
	if errors.Is(err, resume.ErrNoRun) {
		return Plan{}, &NoRunError{ID: o.RunID, Workspace: ws}
	}
	cut := rp.Finish
	p := Plan{Workspace: ws, State: st, Cut: cut}
	if cut != nil {
		p.Queue = resume.Queued(runs, cut.ID)
	}
	if !o.New && o.Phrase == "" && !st.Waking && len(st.Steps) == 0 && cut == nil {
		return Plan{}, &NothingError{Workspace: ws}
	}
	if rp.Passed() && st.Waking && o.Phrase == "" && !o.New && !o.NoRestore {
		p.Action, p.Last = Pass, *rp.Last
		return p, nil
	}
	// On a confirmed brief the phrase is an addition, not a task (R3.9).
	task, added := o.Phrase, ""
	if st.Waking && o.Phrase != "" {
		task, added = "", o.Phrase
	}
	switch {
	case cut == nil:
		p.Action, p.Task, p.Phrase = Start, task, added
	case added != "":
		p.Action, p.Phrase = FinishThenStart, added
	case len(p.Queue) > 0:
		// An earlier wake queued its phrase and was killed.
		p.Action, p.Said = FinishThenStart, o.Phrase
	default:
		// Words typed while the brief is unfinished go to the cut run's
		// clarification, not to a run of their own.
		p.Action, p.Said = Finish, o.Phrase
	}
	return p, nil
}

// CountWake records a Pass start as a wake all the same (seed 000: woke)
// and refreshes the exports: lineage.json, and manifest.json when it is
// missing or differs from the store (issue 22 item 5).
func CountWake(ctx context.Context, s store.Store, runDir, ws string) error {
	if err := s.Commit(ctx, store.Batch{Wake: ws}); err != nil {
		return fmt.Errorf("count wake: %w", err)
	}
	// Exports: the store holds the count and the rows.
	_ = workflow.ExportLineage(ctx, s, runDir, ws)
	_ = workflow.ExportManifest(ctx, s, runDir, ws)
	return nil
}

// Flow builds the workflow of one run: task is the run's task, said the
// words typed on this wake that an unfinished clarification receives, and
// phrase the words added to a confirmed brief. starter.New makes flower's.
type Flow func(task, said, phrase string) *workflow.Workflow

// Drive runs the plan on rt: the cut run with its own task and phrase,
// then, for FinishThenStart and only if that ended without error or
// interrupt, the new run. opts are the engine's per-process options;
// Drive sets RunID, NoRestore, SameWake, Task and Phrase. A Pass plan
// runs nothing: see CountWake.
func (p Plan) Drive(ctx context.Context, rt *agent.Runtime, opts workflow.Options, flow Flow) workflow.Outcome {
	var out workflow.Outcome
	switch p.Action {
	case Finish, FinishThenStart:
		o := opts
		o.RunID = p.Cut.ID
		out = flow(p.Cut.Task, p.Said, p.Cut.Phrase).Run(ctx, rt, o)
		if p.Action == Finish || out.Err != nil || out.Interrupted {
			return out
		}
		for _, q := range p.Queue {
			o.RunID, o.SameWake = q.ID, true
			if out = flow(q.Task, q.Task, q.Phrase).Run(ctx, rt, o); out.Err != nil || out.Interrupted {
				return out
			}
		}
		if p.Task == "" && p.Phrase == "" {
			return out
		}
	case Start:
	default:
		return workflow.Outcome{Err: fmt.Errorf("wake: nothing to drive for a %v plan", p.Action)}
	}
	// A new run; after a cut one was finished, in the same wake (R3.1).
	opts.NoRestore, opts.SameWake, opts.Task, opts.Phrase = true, p.Cut != nil, p.Task, p.Phrase
	if p.New != nil { // stored by Prepare: the engine takes it up
		opts.NoRestore, opts.RunID = false, p.New.ID
	}
	return flow(p.Task, p.Task, p.Phrase).Run(ctx, rt, opts)
}
