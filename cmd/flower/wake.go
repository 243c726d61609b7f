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
	st := workflow.WakeState(ws, g.runDir)
	if !f.fresh && !st.Waking && phrase == "" && len(st.Steps) == 0 && !pendingRun(g.runDir) {
		return usageErr(`nothing to continue in %s: start with flower "describe the task"`, tilde(ws))
	}
	// Take the run dir before touching the thread: a process refused here
	// must not have archived or amended another's brief.
	unlock, err := workflow.Lock(g.runDir, time.Now())
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	defer unlock()
	if f.fresh {
		if err := archive(ws, g.runDir, time.Now()); err != nil {
			return &exitError{code: exitFailed, err: err}
		}
		st = workflow.WakeState(ws, g.runDir)
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
	rt, err := agent.New(agent.Options{Workspace: ws, RunDir: g.runDir, Provider: b.provider, Retry: b.retrier(), Trim: !g.noTrim,
		Tools: append(ch.Tools(), workflow.VerdictTool{}), Policies: cfg.Policies()})
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	defer rt.Close()
	if added != "" {
		if err := workflow.AddOnWake(ws, added, time.Now()); err != nil {
			return &exitError{code: exitFailed, err: err}
		}
	}
	line := banner(ws, st, rt.Store(), g.runDir)
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
	w := workflow.Starter(workflow.StarterOptions{Workspace: ws, Task: task, Phrase: added, Model: b.model,
		Rounds: f.rounds, MaxTurns: f.maxTurns, Budget: f.budget})
	opts := workflow.Options{RunDir: g.runDir, Sink: sink, NoRestore: f.noRestore, Locked: true}
	outc := w.Run(ctx, rt, opts)
	if outc.Resumed && added != "" && !outc.Interrupted {
		// The cut run is finished; now the phrase gets a run of its own (R3.1).
		opts.SameWake = true
		outc = w.Run(ctx, rt, opts)
	}
	if startOver.Load() {
		return archiveNow(ws, g.runDir, out)
	}
	return wakeExit(ctx, outc, rt.TotalCost(), out)
}

// archiveNow ends a wake whose person typed /new: the thread is archived
// and the next flower "task" starts afresh.
func archiveNow(ws, runDir string, out io.Writer) error {
	if err := archive(ws, runDir, time.Now()); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	fmt.Fprintf(out, "archived this thread under %s: start the next one with flower \"task\"\n", filepath.Join(tilde(ws), workflow.ArchiveDir))
	return nil
}

func pendingRun(runDir string) bool {
	_, err := os.Stat(filepath.Join(runDir, workflow.StateFile))
	return err == nil
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
func banner(ws string, st workflow.State, s store.Store, runDir string) string {
	if !st.Waking && len(st.Steps) == 0 {
		return "-> starting in " + tilde(ws)
	}
	parts := []string{}
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

// archive moves the thread's lineage, brief and goals into
// notes/archive/<time>/ and zeroes the lineage (R3.13).
func archive(ws, runDir string, now time.Time) error {
	l, _ := workflow.LoadLineage(runDir, ws, nil)
	into := filepath.Join(ws, workflow.ArchiveDir, now.Format("20060102-150405"))
	if err := l.Archive(into, filepath.Join(ws, workflow.BriefPath), filepath.Join(ws, workflow.GoalsPath),
		filepath.Join(runDir, workflow.StateFile)); err != nil {
		return err
	}
	return l.Save()
}
