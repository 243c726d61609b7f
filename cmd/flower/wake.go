package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow"
)

// wakeFlags are the flags of flower [TASK].
type wakeFlags struct {
	fresh     bool // --new
	timeout   float64
	maxAsks   int
	rounds    int
	noRestore bool
	reset     bool
	yes       bool
	runID     string // --run
	maxTurns  int
	budget    float64
}

// wake starts, or continues, the work in this directory (R3.1), on the
// terminal.
func wake(ctx context.Context, g *globals, f *wakeFlags, phrase string, out io.Writer, stdin io.Reader) error {
	return wakeWith(ctx, g, f, phrase, out, terminal(out, stdin))
}

// wakeWith is wake on any front end: the terminal, or HTTP and the Web page
// (flower serve).
func wakeWith(ctx context.Context, g *globals, f *wakeFlags, phrase string, out io.Writer, fe frontEnd) error {
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	if f.fresh && phrase == "" {
		return usageErr(`--new needs the new task, e.g. flower --new "write a CLI for X"`)
	}
	if !f.fresh && phrase == "" && f.runID == "" && !hasRunDir(g.runDir) && !workflow.WakeState(ws, nil).Waking {
		return nothingToContinue(ws)
	}
	if err := checkRunID(ctx, g, ws, f.runID); err != nil {
		return err
	}
	// Take the run dir before touching the thread: a process refused here
	// must not have archived or amended another's brief.
	unlock, err := workflow.Lock(g.runDir, time.Now())
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	defer unlock()
	s, err := openRunDir(ctx, g.runDir, ws, out)
	if err != nil {
		return err
	}
	defer s.Close()
	if f.fresh {
		if _, err := workflow.Archive(ctx, s, g.runDir, ws, time.Now()); err != nil {
			return &exitError{code: exitFailed, err: err}
		}
	}
	st := workflow.WakeState(ws, s)
	cut, err := cutRun(ctx, s, ws, f)
	if err != nil {
		return err
	}
	if !f.fresh && phrase == "" && !st.Waking && len(st.Steps) == 0 && cut == nil {
		return nothingToContinue(ws)
	}
	if last, done := passedLast(ctx, s, ws); done && st.Waking && cut == nil && phrase == "" && !f.fresh && !f.noRestore {
		fmt.Fprintf(out, "✓ run %s passed its verdict: nothing to continue in %s\n"+
			"  say what to change: flower \"...\" (the judge checks it too), or start another task: flower --new \"...\"\n",
			last.ID, tilde(ws))
		return nil
	}
	task, added := phrase, ""
	if st.Waking && phrase != "" {
		task, added = "", phrase
	}
	cfg, err := config.Load(ws)
	if err != nil {
		return usageErr("%v", err)
	}
	b, err := chooseBackend(g.model)
	if err != nil {
		return err
	}
	defer b.release()
	o := newOracle(ws, g.runDir, b)
	defer o.Close()
	sink := func(e event.Event) { fe.sink(e); o.Observe(e) }
	ch := human.New(human.Options{Sink: sink, MaxAsks: maxAsks(f.maxAsks), Timeout: timeout(f.timeout),
		Workbench: filepath.Join(ws, workflow.WorkbenchDir)})
	rt, err := agent.New(agent.Options{Workspace: ws, Store: s, Provider: b.provider, Retry: b.retrier(), Trim: !g.noTrim,
		Tools: append(ch.Tools(), workflow.VerdictTool{}), Policies: cfg.Policies()})
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	defer rt.Close()
	line := banner(ws, st, s, cut)
	fmt.Fprintln(out, line)
	if !st.Waking && strings.TrimSpace(st.Brief) != "" {
		fmt.Fprintf(out, "note: ignored %s: it lacks its four sections (%s)\n", workflow.BriefPath, strings.Join(workflow.BriefSections, ", "))
	}
	ctx, stop := interruptible(ctx, rt, os.Stderr, fe.firstCtrlC)
	defer stop()
	var startOver atomic.Bool
	restart := func() {
		startOver.Store(true)
		fmt.Fprintln(out, "flower: /new: stopping at the next message boundary, then archiving this thread")
		rt.Interrupt("")
	}
	detach, err := fe.attach(ctx, wakeRun{ch: ch, rt: rt, oracle: o, banner: line, wake: st.Woke + 1, ws: tilde(ws),
		startOver: restart})
	if err != nil {
		return err
	}
	defer detach()
	starter := func(task, phrase string) *workflow.Workflow {
		return workflow.Starter(workflow.StarterOptions{Workspace: ws, Task: task, Phrase: phrase, Model: b.model,
			Rounds: f.rounds, MaxTurns: f.maxTurns, Budget: f.budget})
	}
	opts := workflow.Options{RunDir: g.runDir, Sink: sink, Locked: true}
	var outc workflow.Outcome
	if cut != nil {
		outc = finishCut(ctx, rt, opts, cut, starter, phrase, st.Waking)
	}
	if cut == nil || (added != "" && outc.Err == nil && !outc.Interrupted) {
		// A new run; after a cut one was finished, the phrase gets a run of
		// its own (R3.1).
		opts.NoRestore, opts.SameWake, opts.Task, opts.Phrase = true, cut != nil, task, added
		outc = starter(task, added).Run(ctx, rt, opts)
	}
	if startOver.Load() {
		return archiveNow(ctx, s, ws, g.runDir, out)
	}
	return wakeExit(ctx, outc, rt.TotalCost(), out)
}

// finishCut drives the cut run to its end with the phrase it was started
// with. Words typed on this wake while the brief is unfinished reach the
// clarification as its task (R3.10).
func finishCut(ctx context.Context, rt *agent.Runtime, opts workflow.Options, cut *store.Run,
	starter func(task, phrase string) *workflow.Workflow, phrase string, waking bool) workflow.Outcome {
	task := "" // a cut step goes on from its session or its stored prompt
	switch {
	case phrase != "" && !waking:
		task = phrase
	case cut.Step == "":
		// Cut between steps (right after the run was created, say): the
		// next step starts from its prompt, which must carry the task the
		// run was started with.
		task = cut.Task
	}
	opts.RunID = cut.ID
	return starter(task, cut.Phrase).Run(ctx, rt, opts)
}

// cutRun is the in-flight run this wake finishes: --run ID, else the
// newest in flight unless --no-restore.
func cutRun(ctx context.Context, s store.Store, ws string, f *wakeFlags) (*store.Run, error) {
	if f.runID != "" {
		r, ok, err := s.Run(ctx, f.runID)
		if err != nil {
			return nil, &exitError{code: exitFailed, err: err}
		}
		if !ok || r.Workspace != ws || r.Status != store.RunInFlight {
			return nil, usageErr("--run %s: no such run in flight in %s (flower ps lists them)", f.runID, tilde(ws))
		}
		return &r, nil
	}
	if f.noRestore {
		return nil, nil
	}
	r, err := workflow.InFlight(ctx, s, ws)
	if err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	return r, nil
}

// checkRunID refuses --run ID before anything is created or locked when
// the store has no such run in flight: a usage error writes nothing.
// cutRun checks again under the lock. A run dir an older flower wrote is
// let through: the import the wake does first may bring the run.
func checkRunID(ctx context.Context, g *globals, ws, id string) error {
	if id == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(g.runDir, "state.json")); err == nil {
		return nil
	}
	_, s, err := readStore(g)
	if err != nil {
		return err
	}
	if s == nil {
		return usageErr("--run %s: no such run in flight in %s (flower ps lists them)", id, tilde(ws))
	}
	defer s.Close()
	_, err = cutRun(ctx, s, ws, &wakeFlags{runID: id})
	return err
}

// passedLast returns the newest run of the workspace if it ended with a
// passed verdict: a bare wake then has nothing to do and pays for nothing.
func passedLast(ctx context.Context, s store.Store, ws string) (store.Run, bool) {
	runs, err := s.Runs(ctx, ws)
	if err != nil || len(runs) == 0 {
		return store.Run{}, false
	}
	last := runs[len(runs)-1]
	return last, last.Status == store.RunFinished && last.Outcome == "passed"
}

func nothingToContinue(ws string) error {
	return usageErr(`nothing to continue in %s: start with flower "describe the task"`, tilde(ws))
}

// hasRunDir reports whether the run dir holds a store (or state written
// by an older flower).
func hasRunDir(runDir string) bool {
	for _, name := range []string{storeFile, "state.json"} {
		if _, err := os.Stat(filepath.Join(runDir, name)); err == nil {
			return true
		}
	}
	return false
}

const storeFile = "sessions.db"

// openRunDir opens the run dir's store, creating it if needed, and imports
// the run state an older flower kept in JSON files.
func openRunDir(ctx context.Context, runDir, ws string, out io.Writer) (store.Store, error) {
	s, err := openStore(filepath.Join(runDir, storeFile))
	if err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	note, err := workflow.Upgrade(ctx, s, runDir, ws)
	if err != nil {
		s.Close()
		return nil, &exitError{code: exitFailed, err: err}
	}
	if note != "" {
		fmt.Fprintln(out, "note: "+note)
	}
	return s, nil
}

// archiveNow ends a wake whose person typed /new: the thread is archived
// and the next flower "task" starts afresh.
func archiveNow(ctx context.Context, s store.Store, ws, runDir string, out io.Writer) error {
	if _, err := workflow.Archive(context.WithoutCancel(ctx), s, runDir, ws, time.Now()); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	fmt.Fprintf(out, "archived this thread under %s: start the next one with flower \"task\"\n", filepath.Join(tilde(ws), workflow.ArchiveDir))
	return nil
}

func maxAsks(n int) *int {
	if n < 0 {
		return nil
	}
	return &n
}

func timeout(s float64) time.Duration {
	if s < 0 {
		return human.Forever
	}
	return human.TimeoutFromSeconds(&s)
}

func wakeExit(ctx context.Context, o workflow.Outcome, cost float64, out io.Writer) error {
	switch {
	case o.Passed:
		fmt.Fprintf(out, "\n✓ verdict passed · run %s · $%.4f\n", o.Run, cost)
		return nil
	case o.Interrupted || ctx.Err() != nil:
		return &exitError{code: exitInterrupted, err: fmt.Errorf("stopped: run flower again here to continue where it stopped")}
	case errors.Is(o.Err, workflow.ErrBusy):
		return &exitError{code: exitFailed, err: o.Err}
	case o.Err != nil:
		return &exitError{code: exitFailed, err: fmt.Errorf("%v (run flower again here to retry)", o.Err)}
	}
	fmt.Fprintf(out, "\n✗ verdict failed after the last round · run %s · $%.4f\n%s\n", o.Run, cost, o.Verdict)
	return &exitError{code: exitFailed, err: fmt.Errorf(`the judge did not pass the work: run flower again to keep working, or flower "what to change"`)}
}

// banner is the one line a wake starts with (R3.12).
func banner(ws string, st workflow.State, s store.Store, cut *store.Run) string {
	if !st.Waking && len(st.Steps) == 0 && cut == nil {
		return "-> starting in " + tilde(ws)
	}
	parts := []string{}
	if cut != nil {
		parts = append(parts, "finishing run "+cut.ID+" at "+cutStep(cut))
	}
	if st.Waking {
		parts = append(parts, "brief confirmed")
	}
	if st.Checks > 0 {
		parts = append(parts, fmt.Sprintf("%d goals", st.Checks))
	}
	if c := lastContext(s, ws, st.Steps["work"]); c > 0 {
		parts = append(parts, "work context "+kilo(c))
	}
	parts = append(parts, fmt.Sprintf("wake %d", st.Woke+1))
	return "<- continuing in " + tilde(ws) + "  " + strings.Join(parts, " · ")
}

// cutStep names where a cut run stopped.
func cutStep(r *store.Run) string {
	if r.Row != "" {
		return r.Row
	}
	return "step " + fmt.Sprint(len(r.Done)+1)
}

// lastContext is the context size of a session's last model response.
func lastContext(s store.Store, ws, id string) int {
	if id == "" {
		return 0
	}
	e, ok, err := s.Last(context.Background(), store.SessionKey(ws, id), store.KindAssistant)
	if err != nil || !ok || e.Usage == nil {
		return 0
	}
	return e.Usage.Context()
}

func tilde(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "/" && strings.HasPrefix(p, home+"/") {
		return "~" + strings.TrimPrefix(p, home)
	}
	return p
}
