package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/front/script"
	"github.com/flower-run/flower/front/term"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/wake"
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
	taskFile  string // -f: the task's file
	recheck   bool   // --recheck, or Enter after a pass: a fresh judge only
}

// wakeTerminal starts, or continues, the work in this directory (R3.1), on the
// terminal.
func wakeTerminal(ctx context.Context, g *globals, f *wakeFlags, phrase string, out io.Writer, stdin io.Reader) error {
	if err := findProject(g, stdin, out); err != nil {
		return err
	}
	if err := confirmAtStart(g, f, stdin, out); err != nil {
		return err
	}
	phrase, err := script.Task(phrase, f.taskFile, stdin)
	if err != nil {
		return fail(err)
	}
	f.taskFile = "" // read: wakeWith takes the phrase
	if phrase == "" && !f.fresh && f.runID == "" && !f.noRestore && !f.recheck && term.Interactive(stdin, out) {
		var s startup
		if shown, passed := passedPlan(ctx, g); passed && f.timeout != 0 {
			s, f.recheck, err = askAfterPass(stdin, out, shown)
		} else {
			s, err = askStartup(stdin, out, hasHistory(g), whereStopped(ctx, g))
		}
		if err != nil {
			return usageErr(`%v: start with flower "describe the task"`, err)
		}
		phrase, f.fresh = s.phrase, s.fresh
	}
	return wakeWith(ctx, g, f, phrase, out, steered(g, terminal(out, stdin), true))
}

// wakeWith is wake on any front end: the terminal, or HTTP and the Web page
// (flower serve). What the wake does is package wake's; here it is wired
// to a backend, the oracle, the human channel and the front end.
func wakeWith(ctx context.Context, g *globals, f *wakeFlags, phrase string, out io.Writer, fe frontEnd) error {
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	if phrase, err = script.Task(phrase, f.taskFile, os.Stdin); err != nil {
		return fail(err)
	}
	if err := findProject(g, nil, out); err != nil { // serve's wakes: no one to ask
		return err
	}
	cfg, err := flower.LoadConfig(ws) // first: it may declare the prices --budget needs
	if err != nil {
		return fail(err)
	}
	if err := checkLimits(g.model, f.maxTurns, f.budget); err != nil {
		return err
	}
	if err := checkRounds(f.rounds); err != nil {
		return err
	}
	if err := checkAsks(f.timeout, f.maxAsks); err != nil {
		return err
	}
	if f.recheck && (phrase != "" || f.fresh || f.runID != "") {
		return usageErr("--recheck checks the work as it is: it takes no TASK, --new or --run")
	}
	if f.recheck {
		if err := recheckable(g); err != nil {
			return err
		}
	}
	u, err := g.storeURL()
	if err != nil {
		return err
	}
	wo := wake.Options{Phrase: phrase, New: f.fresh, NoRestore: f.noRestore || f.recheck, RunID: f.runID}
	if err := wake.Check(ws, g.hasStore(), wo); err != nil {
		return wakeErr(err, ws)
	}
	if err := flower.CheckRun(ctx, g.runDir, u, ws, f.runID); err != nil {
		return wakeErr(err, ws)
	}
	// Take the workspace and the run dir before touching the thread: a
	// process refused here must not have archived or amended another's
	// brief.
	h, err := g.openHost(ctx, cfg, out)
	if err != nil {
		return err
	}
	defer h.Close()
	plan, err := h.Prepare(ctx, wo)
	if err != nil {
		return wakeErr(err, ws)
	}
	if plan.Action == wake.Pass {
		fmt.Fprintln(out, flower.Banner(ctx, h.Store(), ws, plan.State, nil))
		if err := wake.CountWake(ctx, h.Store(), g.runDir, ws); err != nil {
			return fail(err)
		}
		fmt.Fprintf(out, "✓ run %s passed its verdict: nothing to continue\n%s\n"+
			"  say what to change: flower \"...\" (the judge checks it too); work and judge again: flower --no-restore; another task: flower --new \"...\"\n",
			plan.Last.ID, indent(term.Clean(plan.Last.Findings)))
		return nil
	}
	_, err = h.Wake(ctx, plan, flower.WakeOptions{Front: fe.Front, Out: out,
		Human: flower.HumanOptions{MaxAsks: maxAsks(f.maxAsks), Timeout: timeout(f.timeout)},
		Drive: flower.DriveOptions{Rounds: judgeRounds(f.rounds), MaxTurns: f.maxTurns, Budget: f.budget, Recheck: f.recheck},
		Guard: func(ctx context.Context, rt *agent.Runtime) (context.Context, func()) {
			return interruptible(ctx, rt, os.Stderr, fe.firstCtrlC)
		},
		Ended: func(w flower.Woke) error { return wakeExit(w, out) }})
	return fail(err)
}

// wakeErr shows a refused wake as a usage error, anything else as a failure.
func wakeErr(err error, ws string) error {
	var nothing *wake.NothingError
	var noRun *wake.NoRunError
	switch {
	case errors.Is(err, wake.ErrNoTask):
		return usageErr(`--new needs the new task, e.g. flower --new "write a CLI for X"`)
	case errors.As(err, &nothing):
		return nothingToContinue(ws)
	case errors.As(err, &noRun):
		return usageErr("--run %s: no such run in flight in %s (flower ps lists them)", noRun.ID, tilde(ws))
	}
	return &exitError{code: exitFailed, err: err}
}

func indent(text string) string {
	if text == "" {
		return ""
	}
	return "  " + strings.ReplaceAll(strings.TrimSpace(text), "\n", "\n  ")
}

func nothingToContinue(ws string) error {
	return usageErr(`nothing to continue in %s: start with flower "describe the task"`, tilde(ws))
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

// wakeExit says how a wake ended and exits with it.
func wakeExit(w flower.Woke, out io.Writer) error {
	o, cost := w.Outcome, w.Cost
	switch {
	case w.Archived:
		return nil
	case o.Passed:
		fmt.Fprintf(out, "\n✓ verdict passed · run %s · %s\n", o.Run, model.USD(cost))
		return nil
	case o.Interrupted || w.Stopped:
		return &exitError{code: exitInterrupted, err: fmt.Errorf("stopped: run flower again here to continue where it stopped")}
	case errors.Is(o.Err, store.ErrBusy):
		return &exitError{code: exitFailed, err: o.Err}
	case model.Fix(o.Err) != "":
		return &exitError{code: exitFailed, err: fmt.Errorf("%v: %s, then run flower again here", o.Err, model.Fix(o.Err))}
	case o.Err != nil:
		return &exitError{code: exitFailed, err: fmt.Errorf("%v (run flower again here to retry)", o.Err)}
	}
	fmt.Fprintf(out, "\n✗ verdict failed after the last round · run %s · %s\n%s\n", o.Run, model.USD(cost), term.Clean(o.Verdict))
	return &exitError{code: exitFailed, err: fmt.Errorf(`the judge did not pass the work: run flower again to keep working, or flower "what to change"`)}
}
