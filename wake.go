package flower

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flower-run/flower/internal/atomicfile"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/wake"
	"github.com/flower-run/flower/workflow"
	"github.com/flower-run/flower/workflow/starter"
)

// Prepare readies the workspace for a wake of flower's starter flow and
// decides what this start does (package wake): the workbench .flower/
// exists, the notes the agent deleted are written back from the store
// (said on Options.Notice), a --new start archives the thread. A Pass plan
// needs no Start: see wake.CountWake.
func (h *Host) Prepare(ctx context.Context, o wake.Options) (wake.Plan, error) {
	if err := h.checkDamage(ctx); err != nil {
		return wake.Plan{}, err
	}
	if err := ensureWorkbench(h.ws); err != nil {
		return wake.Plan{}, err
	}
	atomicfile.SweepTree(filepath.Join(h.ws, starter.WorkbenchDir)) // under the workspace's lock; notes/ included
	restored, err := starter.SyncNotes(ctx, h.store, h.ws)
	if err != nil {
		return wake.Plan{}, err
	}
	if len(restored) > 0 {
		noteTo(h.notice(), "note: restored %s from the store (it had been deleted)", strings.Join(restored, " and "))
	}
	return wake.Prepare(ctx, h.store, h.runDir, h.ws, o, time.Now())
}

// checkDamage refuses a SQLite store that holds less than the run dir's
// high-water mark (workflow.CheckMark): it lost committed records, and
// going on would redo finished work (issue 22 item 2). A PostgreSQL
// store's run dirs are per machine and may lag; its server keeps it whole,
// and CheckMark checks nothing there.
func (h *Host) checkDamage(ctx context.Context) error {
	return workflow.CheckMark(ctx, h.store, h.runDir, h.ws)
}

// DriveOptions shape the starter flow's runs.
type DriveOptions struct {
	Rounds   int     // work rounds after a failed verdict
	MaxTurns int     // model responses per step
	Budget   float64 // USD per step (0: no limit)
	Recheck  bool    // a fresh judge only: no work, no rework
}

// Drive carries out a prepared plan with flower's starter flow (clarify,
// goals, work, judge) on the started runtime; events go to Start's sink.
func (h *Host) Drive(ctx context.Context, plan wake.Plan, o DriveOptions) workflow.Outcome {
	if h.rt == nil {
		return workflow.Outcome{Err: fmt.Errorf("flower: Drive before Start")}
	}
	flow := func(task, said, phrase string) *workflow.Workflow {
		return starter.New(starter.Options{Workspace: h.ws, Task: task, Said: said, Phrase: phrase, Model: h.backend.Model,
			Rounds: o.Rounds, MaxTurns: o.MaxTurns, Budget: o.Budget, Keep: h.store, Recheck: o.Recheck})
	}
	out := plan.Drive(ctx, h.rt, workflow.Options{RunDir: h.runDir, Sink: h.sink, Stored: h.keepProjectID}, flow)
	out.Err = withStorageFix(out.Err, h.runDir) // a disk that filled up during the run (issue 23)
	return out
}

// Archive archives the workspace's thread (lineage, brief, goals) under
// .flower/archive: the next start begins afresh (/new, R3.13).
func (h *Host) Archive(ctx context.Context) error {
	_, err := starter.Archive(context.WithoutCancel(ctx), h.store, h.runDir, h.ws, time.Now())
	return err
}

// ensureWorkbench creates the workbench .flower/ with a .gitignore of
// everything, so a `git add -A` never commits flower's notes. A
// workbench the person made is left as it is.
func ensureWorkbench(ws string) error {
	dir := filepath.Join(ws, starter.WorkbenchDir)
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("# flower's workbench: notes, handoffs, spilled results\n*\n"), 0o644); err != nil {
		return fmt.Errorf("create %s/.gitignore: %w", dir, err)
	}
	return nil
}

// LastContext is the context size of a session's last model response.
func LastContext(ctx context.Context, s store.Store, ws, id string) int {
	if id == "" {
		return 0
	}
	e, ok, err := s.Last(ctx, store.SessionKey(ws, id), store.KindAssistant)
	if err != nil || !ok || e.Usage == nil {
		return 0
	}
	return e.Usage.Context()
}

// Run runs a workflow of the caller's own on the started runtime, or
// finishes the run of it a crash cut: Options' RunDir, Sink and Leaser are
// the Host's (it holds the run dir), and a step or judge whose Spec names
// no model gets the Host's.
func (h *Host) Run(ctx context.Context, w *workflow.Workflow, o workflow.Options) workflow.Outcome {
	if h.rt == nil {
		return workflow.Outcome{Err: fmt.Errorf("flower: Run before Start")}
	}
	wc := *w
	wc.Steps = slices.Clone(w.Steps)
	for i := range wc.Steps {
		wc.Steps[i].Spec.Model = cmp.Or(wc.Steps[i].Spec.Model, h.backend.Model)
	}
	if w.Judge != nil {
		j := *w.Judge
		j.Spec.Model = cmp.Or(j.Spec.Model, h.backend.Model)
		wc.Judge = &j
	}
	o.RunDir, o.Sink, o.Leaser = h.runDir, h.sink, nil
	if stored := o.Stored; stored != nil {
		o.Stored = func() { h.keepProjectID(); stored() }
	} else {
		o.Stored = h.keepProjectID
	}
	out := wc.Run(ctx, h.rt, o)
	out.Err = withStorageFix(out.Err, h.runDir)
	return out
}

// CheckRun refuses, before anything is locked or created, a run id that
// is not in flight in ws, with a *wake.NoRunError: a refused --run writes
// nothing. A run dir an older flower wrote is let through: the wake
// imports it, then checks.
func CheckRun(ctx context.Context, runDir, url, ws, id string) error {
	if id == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(runDir, oldStateFile)); err == nil {
		return nil
	}
	s, err := ReadStore(ctx, runDir, url)
	if err != nil {
		return err
	}
	if s == nil {
		return &wake.NoRunError{ID: id, Workspace: ws}
	}
	defer s.Close()
	runs, err := s.Runs(ctx, ws)
	if err != nil {
		return err
	}
	if _, err := resume.PlanRuns(runs, id, false); err != nil {
		return &wake.NoRunError{ID: id, Workspace: ws}
	}
	return nil
}
