package workflow

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/resilience"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
)

// runner is one process's execution of a workflow. Its run and lineage are
// copies of the store's records, reloaded after every commit the agent
// makes on its behalf; the store is the only truth (DESIGN.md §3.7).
type runner struct {
	w       *Workflow
	rt      *agent.Runtime
	st      store.Store
	ws      string
	opts    Options
	run     store.Run
	lineage store.Lineage
	dead    map[string]bool   // steps whose lineage session is gone from the store
	ran     map[string]string // step -> session, attempts of this process
	resumed bool
	read    bool // run and lineage were read from the store once (reload)
}

func newRunner(w *Workflow, rt *agent.Runtime, opts Options) *runner {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RunDir == "" {
		opts.RunDir = "runs"
	}
	return &runner{w: w, rt: rt, st: rt.Store(), ws: rt.Workspace(), opts: opts, dead: map[string]bool{}, ran: map[string]string{}}
}

func (r *runner) emit(e event.Event) {
	if r.opts.Sink == nil {
		return
	}
	defer func() { _ = recover() }()
	r.opts.Sink(e)
}

func (r *runner) warn(text string) {
	if text != "" {
		r.emit(event.Event{Kind: event.Error, Text: text, Payload: map[string]any{"warning": true}})
	}
}

// prepare picks the run this process drives (the cut one, or a new one)
// and counts the wake, in one commit.
func (r *runner) prepare(ctx context.Context) error {
	cut, err := r.cutRun(ctx)
	if err != nil {
		return err
	}
	if cut != nil {
		r.run, r.resumed = *cut, true
	} else {
		now := r.opts.Now()
		r.run = store.Run{ID: newRunID(now, randHex), Workspace: r.ws, Status: store.RunInFlight,
			Task: r.opts.Task, Phrase: r.opts.Phrase, Created: now}
	}
	r.run.Holder = hostPID()
	b := store.Batch{Run: &r.run}
	if !r.opts.SameWake {
		b.Wake = r.ws
	}
	if err := r.commit(ctx, b); err != nil {
		return err
	}
	if r.opts.Stored != nil {
		r.opts.Stored()
	}
	// What the person allowed "for this run" holds again after a crash.
	if err := r.rt.SetRun(ctx, r.run.ID); err != nil {
		return err
	}
	r.validate()
	if err := r.restoreRan(ctx); err != nil {
		return err
	}
	// A crash may have come between a commit and its export.
	r.exportHeldLineage()
	r.exportManifest(ctx)
	return nil
}

// cutRun is the in-flight run this process finishes: the one named by
// RunID, else the newest in flight unless NoRestore asks for a new run
// (resume.PlanRuns).
func (r *runner) cutRun(ctx context.Context) (*store.Run, error) {
	runs, err := r.st.Runs(ctx, r.ws)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	p, err := resume.PlanRuns(runs, r.opts.RunID, r.opts.NoRestore)
	return p.Finish, err
}

// validate drops, step by step, a lineage session the store no longer has:
// that step starts afresh, the live ones stay connected and the wake count
// survives (R3.3). Silently, as seed 000 says: connection is an extra, and
// a store that lost what it had committed is refused before any run starts
// (workflow/mark.go), so what is left here is a session the person removed.
// The step's header still says "new session".
func (r *runner) validate() {
	for step, id := range r.lineage.Steps {
		if !r.rt.HasSession(id) {
			r.dead[step] = true
		}
	}
}

// restoreRan recovers, from the run's stored rows, the sessions its steps
// ran in before the process that ran them ended: a later step that
// continues an earlier one of the same run (ResumeFrom) finds it even in a
// workflow that is not continuous, where the lineage does not count.
func (r *runner) restoreRan(ctx context.Context) error {
	if !r.resumed {
		return nil
	}
	rows, err := r.st.Results(context.WithoutCancel(ctx), r.run.ID)
	if err != nil {
		return fmt.Errorf("read the rows of run %s: %w", r.run.ID, err)
	}
	for _, row := range rows {
		step, _, _ := strings.Cut(row.Step, "#")
		if row.SessionID != "" && !strings.Contains(step, "·") {
			r.ran[step] = row.SessionID
		}
	}
	return nil
}

func randHex() string {
	b := make([]byte, 3)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// RunID is a new run's id, as the engine makes them: the time, then 6 hex
// digits (a wake that queues a run behind a cut one names it so).
func RunID(now time.Time) string { return newRunID(now, randHex) }

func newRunID(now time.Time, rnd func() string) string {
	return fmt.Sprintf("%s-%s", now.Format("20060102-150405"), rnd())
}

// commit writes a batch holding the run as it is now, then reloads the run
// and the lineage. A failed commit stops the run: the store is the truth.
func (r *runner) commit(ctx context.Context, b store.Batch) error {
	if b.Run != nil {
		b.Run.Updated = r.opts.Now()
	}
	if err := r.st.Commit(context.WithoutCancel(ctx), b); err != nil {
		return fmt.Errorf("record run %s: %w", r.run.ID, err)
	}
	return r.reload(ctx)
}

// reload reads the run and the lineage back from the store, after the
// runner or the agent (through RunOptions.With) committed.
func (r *runner) reload(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	run, ok, err := r.st.Run(ctx, r.run.ID)
	if err != nil {
		return fmt.Errorf("read run %s: %w", r.run.ID, err)
	}
	if ok {
		r.run = run
	}
	l, err := r.st.Lineage(ctx, r.ws)
	if err != nil {
		return fmt.Errorf("read lineage: %w", err)
	}
	r.lineage, r.read = l, true
	return nil
}

// exportLineage and exportManifest refresh the run dir's JSON exports; a
// failed export is a warning: the store holds the truth. exportLineage
// reads the lineage again (the agent may have bound a step since);
// exportHeldLineage writes the one the runner read last, right after a
// reload or a commit that kept it.
func (r *runner) exportHeldLineage() {
	if err := writeLineage(r.opts.RunDir, r.ws, r.lineage); err != nil {
		r.warn(err.Error())
	}
}

func (r *runner) exportLineage(ctx context.Context) {
	if err := ExportLineage(context.WithoutCancel(ctx), r.st, r.opts.RunDir, r.ws); err != nil {
		r.warn(err.Error())
	}
}

func (r *runner) exportManifest(ctx context.Context) {
	if err := ExportManifest(context.WithoutCancel(ctx), r.st, r.opts.RunDir, r.ws); err != nil {
		r.warn(err.Error())
	}
}

func (r *runner) runAll(ctx context.Context) Outcome {
	if err := r.prepare(ctx); err != nil {
		return Outcome{Err: err}
	}
	out := Outcome{Run: r.run.ID, Resumed: r.resumed}
	if r.w.Begin != nil {
		if err := r.w.Begin(r.run); err != nil {
			out.Err = err
			return r.outcome(out)
		}
	}
	for i, st := range r.w.Steps {
		res, err := r.step(ctx, i, st)
		if err != nil || res != nil {
			return r.finish(ctx, out, res, err)
		}
	}
	if r.w.Judge == nil {
		out.Passed = true
		return r.finish(ctx, out, nil, nil)
	}
	out, res, err := r.judge(ctx, out)
	return r.finish(ctx, out, res, err)
}

// finish records how the run ended. A stopped run (interrupt, signal,
// cancelled context) stays in flight so the next wake finishes it.
func (r *runner) finish(ctx context.Context, out Outcome, res *agent.Result, err error) Outcome {
	switch {
	case err != nil:
		out.Err = err
		return r.outcome(out)
	case res != nil && stopped(*res):
		out.Interrupted = true
		out.Err = fmt.Errorf("%s: %w", r.run.Row, errStopped)
		return r.outcome(out)
	case res != nil:
		out.Step = r.run.Row
		out.Err = fmt.Errorf("step %s failed: %s", r.run.Row, res.Error)
		if res.Err != nil { // kept, so the exit can name a fix (a refused key, say)
			out.Err = fmt.Errorf("step %s failed: %w", r.run.Row, res.Err)
		}
	}
	r.run.Status, r.run.Outcome = store.RunFinished, "failed"
	switch {
	case res != nil && res.Stop == agent.StopDiscarded:
		r.run.Status, r.run.Outcome = store.RunDiscarded, "discarded"
	case out.Passed:
		r.run.Outcome = "passed"
	}
	r.clearStep()
	r.run.Holder = ""
	if err := r.commit(ctx, store.Batch{Run: &r.run}); err != nil && out.Err == nil {
		out.Err = err
	}
	return r.outcome(out)
}

// outcome completes out with what the store says of the thread.
func (r *runner) outcome(out Outcome) Outcome {
	out.Woke = r.lineage.Woke
	out.Sessions = r.lineage.Steps
	return out
}

// errStopped is the cause of an Outcome whose run was stopped, not failed.
var errStopped = errors.New("interrupted")

// ErrKilledBySignal is the cause a front end gives when SIGTERM or SIGHUP
// stops the run: the in-flight step's row says so (R3.7).
var ErrKilledBySignal = errors.New("killed-by-signal")

// stopped reports whether a step was stopped rather than failed: the run
// stays in flight and the next wake finishes it.
func stopped(res agent.Result) bool {
	return res.Stop == agent.StopInterrupted || res.Stop == agent.StopCancelled
}

// transient reports whether a failed step may be retried: not when it was
// stopped, failed for good, or abandoned by the discard policy.
func transient(res agent.Result) bool {
	switch res.Stop {
	case agent.StopEnded, agent.StopInterrupted, agent.StopCancelled, agent.StopDiscarded:
		return false
	}
	return resilience.Classify(res.Error) != resilience.Fatal
}

// hostPID names this process for people reading flower ps.
func hostPID() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s pid %d", host, os.Getpid())
}
