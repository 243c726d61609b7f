// Package workflow runs ordered steps of agents plus a goal guard (judge),
// and connects them across processes: the lineage maps each step to its
// session, the manifest accumulates every step attempt, and the run state
// lets a wake after a crash finish the interrupted run where it stopped
// (SPEC §3).
package workflow

import (
	"context"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/store"
)

// Step is a named unit of a workflow, run by one agent in one session.
type Step struct {
	Name string
	Spec agent.Spec
	// Prompt starts the step in a new session.
	Prompt string
	// ResumePrompt is what a connected step receives instead of Prompt: the
	// model already has the context (R3.11). Empty: Prompt is sent as is.
	ResumePrompt string
	// CrashPrompt continues the step after a crash cut it. Empty: the
	// session just goes on exactly where it stopped.
	CrashPrompt string
	// ResumeFrom continues (or with Fork, branches) that step's session.
	ResumeFrom string
	Fork       bool
	// Frozen, when it reports true, skips the step (R3.10).
	Frozen func() bool
	// Context, when set, is read as the step starts in a new session and
	// appended to Prompt: the content of the notes earlier steps froze, so
	// the step has them, not only their paths (seed 000).
	Context func() string
}

// prompt is the prompt a new session of the step starts with.
func (s Step) prompt() string {
	if s.Context == nil {
		return s.Prompt
	}
	if c := s.Context(); c != "" {
		return s.Prompt + "\n\n" + c
	}
	return s.Prompt
}

// Judge is the goal guard: a fresh agent that must call the verdict tool.
// A failed verdict sends its findings back to the Work step's session.
type Judge struct {
	Spec   agent.Spec // its tools must include "verdict"
	Prompt string
	Work   string // the step that receives findings
	Rounds int    // work rounds after failed verdicts; 0 means 3, NoRework none
	// Context, when set, is appended to Prompt as each round starts (see
	// Step.Context).
	Context func() string
	// Findings builds the prompt that gives the work step a failed verdict.
	Findings func(round int, findings string) string
}

// Workflow is an ordered list of steps plus a goal guard.
type Workflow struct {
	Steps []Step
	Judge *Judge
	// Fresh gives every step a new session in every process. The zero
	// value is continuous, as seed 000's Workflow.continuous defaults to
	// true (R3.5): each step continues its lineage session across
	// processes, so a struct literal connects like New. Go has no field
	// defaults, hence the opt-out spelled as Fresh instead of
	// Continuous=false (docs/seeds.md).
	Fresh bool
	// OnStep is called after every step attempt, failures included (R6.10).
	OnStep func(step string, res agent.Result)
	// Begin is called once the run this process drives is durable, before
	// its first step, with the run as stored (a cut run's task and phrase
	// included). An error ends the run before any step.
	Begin func(run store.Run) error
}

// New returns a (continuous) workflow of steps: the same as
// &Workflow{Steps: steps}.
func New(steps ...Step) *Workflow { return &Workflow{Steps: steps} }

// Options are the per-process options of Run.
type Options struct {
	RunDir string
	Sink   event.Sink
	Now    func() time.Time
	// NoRestore starts a new run even when the last one was cut (R5.6).
	NoRestore bool
	// Leaser, when set, leases RunDir to the run: Run takes the lease
	// first and gives it up at the end. Nil: the caller holds it already.
	Leaser store.Leaser
	// SameWake does not count a wake: this process already did, in an
	// earlier Run (the one that finished a run a crash cut).
	SameWake bool
	// Task and Phrase are stored with a new run: the person's words that
	// started it, and the words added on this wake to an existing thread.
	Task, Phrase string
	// RunID finishes that in-flight run (flower --run ID) instead of the
	// newest one.
	RunID string
	// Stored, when set, is called once the run is durable, before its
	// first step: what may exist only where there is state (the
	// project's id, issue 22 item 3) is made there, after the task.
	Stored func()
}

// Outcome is how a run ended.
type Outcome struct {
	Run         string
	Resumed     bool // this process finished a run a crash had cut
	Passed      bool // a verdict passed (or there is no judge and every step succeeded)
	Interrupted bool
	Verdict     string
	Err         error
	Step        string            // the row of the step that failed, if one did
	Woke        int               // the thread's wake count
	Sessions    map[string]string // step -> session, the thread's lineage
}

// Run runs the workflow, or finishes the run a crash cut.
// Only one live process may drive the runs of a run dir: with a Leaser, a
// second one gets an Outcome whose Err wraps store.ErrBusy and names the
// holder.
func (w *Workflow) Run(ctx context.Context, rt *agent.Runtime, opts Options) Outcome {
	r := newRunner(w, rt, opts)
	if opts.Leaser != nil {
		l, err := opts.Leaser.Lease(ctx, r.opts.RunDir)
		if err != nil {
			return Outcome{Err: err}
		}
		defer l.Release()
	}
	return r.runAll(ctx)
}
