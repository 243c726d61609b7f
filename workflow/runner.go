package workflow

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/resilience"
)

// runner is one process's execution of a workflow.
type runner struct {
	w        *Workflow
	rt       *agent.Runtime
	opts     Options
	lineage  *Lineage
	state    *runState
	manifest *Manifest
	resumed  bool
	sessions map[string]string // step -> session, this run
}

func newRunner(w *Workflow, rt *agent.Runtime, opts Options) *runner {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RunDir == "" {
		opts.RunDir = "runs"
	}
	return &runner{w: w, rt: rt, opts: opts, sessions: map[string]string{}}
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

// prepare loads the lineage and the run state, counts the wake and decides
// whether this process finishes a cut run or starts a new one.
func (r *runner) prepare() {
	var note string
	r.lineage, note = LoadLineage(r.opts.RunDir, r.rt.Workspace(), r.rt.HasSession)
	r.warn(note)
	st, note := loadState(r.opts.RunDir)
	r.warn(note)
	if st != nil && st.Status == StatusRunning && !r.opts.NoRestore {
		r.state, r.resumed = st, true
	} else {
		r.state = newState(r.opts.RunDir, newRunID(r.opts.Now(), randHex), "")
	}
	r.manifest = NewManifest(r.opts.RunDir, r.state.Run)
	if _, err := ReadManifest(filepath.Join(r.opts.RunDir, ManifestFile)); err != nil {
		r.warn(fmt.Sprintf("ignored %v: starting a new manifest", err))
	}
	if !r.opts.SameWake {
		r.lineage.Woke++
	}
	r.saveLineage()
	r.saveState()
}

func randHex() string {
	b := make([]byte, 3)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// saveLineage and saveState report a failed write as a warning: connection
// is an extra and never fails the run (R3.2).
func (r *runner) saveLineage() {
	if err := r.lineage.Save(); err != nil {
		r.warn("lineage not saved: " + err.Error())
	}
}

func (r *runner) saveState() {
	if err := r.state.save(); err != nil {
		r.warn("run state not saved: " + err.Error())
	}
}

func (r *runner) run(ctx context.Context) Outcome {
	r.prepare()
	out := Outcome{Run: r.state.Run, Resumed: r.resumed}
	for i, st := range r.w.Steps {
		res, done := r.step(ctx, i, st)
		if !done {
			return r.finish(out, res)
		}
	}
	if r.w.Judge == nil {
		out.Passed = true
		return r.finish(out, nil)
	}
	return r.finish(r.judge(ctx, out))
}

// finish records how the run ended. An interrupted run stays "running" so
// the next wake finishes it.
func (r *runner) finish(out Outcome, res *agent.Result) Outcome {
	switch {
	case res != nil && interrupted(*res):
		out.Interrupted = true
		out.Err = errors.New("interrupted")
		return out
	case res != nil:
		out.Err = fmt.Errorf("step failed: %s", res.Error)
	}
	r.state.Status, r.state.Step = StatusDone, ""
	switch {
	case res != nil && discarded(*res):
		r.state.Status = StatusDiscarded
	case !out.Passed:
		r.state.Status = StatusFailed
	}
	r.saveState()
	return out
}

// ErrKilledBySignal is the cause a front end gives when SIGTERM or SIGHUP
// stops the run: the in-flight step's row says so (R3.7).
var ErrKilledBySignal = errors.New("killed-by-signal")

// interrupted reports whether a step was stopped rather than failed: the
// run stays in flight and the next wake finishes it.
func interrupted(res agent.Result) bool {
	switch res.Error {
	case "interrupted", "context canceled", ErrKilledBySignal.Error():
		return true
	}
	return false
}

// transient reports whether a failed step may be retried: not when it was
// stopped, failed for good, or abandoned by the discard policy.
func transient(res agent.Result) bool {
	return !interrupted(res) && !discarded(res) && resilience.Classify(res.Error) != resilience.Fatal
}

func discarded(res agent.Result) bool {
	return strings.HasPrefix(res.Error, agent.ErrDiscarded.Error())
}
