package worker

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
	"github.com/flower-run/flower/wake"
	"github.com/flower-run/flower/workflow"
)

// drive drives run r to its end, or until ctx is cancelled (drain, lost
// lease): the workspace's lease through flower.Open on the worker's DB,
// the plan that finishes the run, the runtime, the follower of the
// person's journal and the stored event stream, then the starter flow.
// Its events and notes go to <RunDir>/worker/RUN.log.
func (w *Worker) drive(ctx context.Context, r store.Run) error {
	if err := os.MkdirAll(filepath.Join(w.o.RunDir, "worker"), 0o700); err != nil {
		return err
	}
	logf, err := os.OpenFile(w.logPath(r.ID), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	log := &lockedWriter{w: logf}
	h, err := flower.Open(ctx, flower.Options{Workspace: r.Workspace, RunDir: filepath.Join(w.o.RunDir, flower.RunDirName(r.Workspace)),
		DB: w.db, Model: w.o.Model, IdleTimeout: w.o.IdleTimeout, NoTrim: w.o.NoTrim, Secrets: w.o.Secrets, Notice: log})
	if err != nil {
		fmt.Fprintf(log, "flower: %v\n", err)
		return err
	}
	defer h.Close()
	fmt.Fprintf(w.out, "worker: claimed run %s in %s (driver pid %d)\n", r.ID, r.Workspace, os.Getpid())
	fmt.Fprintf(log, "-> run %s in %s, driven by worker pid %d\n", r.ID, r.Workspace, os.Getpid())
	stopWatch := w.watch(ctx, h, r.ID)
	defer stopWatch()

	plan, err := h.Prepare(ctx, wake.Options{RunID: r.ID})
	if err != nil {
		fmt.Fprintf(log, "flower: %v\n", err)
		return err
	}
	if plan.Action == wake.Pass {
		return nil
	}
	stream := web.StoredStream(ctx, h.Store(), h.Workspace(), log) // GET /runs/ID/events reads it
	sink := func(e event.Event) {
		if e.Kind != event.Delta { // the whole text follows
			fmt.Fprintf(log, "%s %s %s\n", time.Now().Format("15:04:05"), e.Kind, e.String())
		}
		if stream != nil {
			stream.Publish(e)
		}
	}
	err = h.Start(ctx, flower.StartOptions{Sink: sink, Tools: []tool.Tool{workflow.VerdictTool{}},
		Human: &flower.HumanOptions{Timeout: w.askTimeoutOf(r)}, LazySandbox: true})
	if err != nil {
		fmt.Fprintf(log, "flower: %v\n", err)
		return err
	}
	stopFollow := w.follow(ctx, h, log)
	out := h.Drive(ctx, plan, w.o.Drive)
	stopFollow()
	if stream != nil {
		if err := stream.End(); err != nil {
			fmt.Fprintf(log, "flower: %v\n", err)
		}
	}
	switch {
	case out.Passed:
		fmt.Fprintf(log, "✓ verdict passed · run %s\n", r.ID)
	case out.Interrupted || ctx.Err() != nil:
		fmt.Fprintf(log, "stopped: %v\n", context.Cause(ctx))
		return nil // done says why (context.Cause)
	case out.Err != nil:
		fmt.Fprintf(log, "flower: %v\n", out.Err)
		return out.Err
	default:
		fmt.Fprintf(log, "✗ verdict failed after the last round · run %s\n", r.ID)
	}
	return nil
}

// askTimeoutOf is how long a question of run r waits: as submitted, else
// the worker's AskTimeout; 0 is unattended.
func (w *Worker) askTimeoutOf(r store.Run) time.Duration {
	s := w.o.AskTimeout.Seconds()
	if r.AskTimeout != nil && *r.AskTimeout >= 0 {
		s = *r.AskTimeout
	}
	return human.TimeoutFromSeconds(&s)
}

// watch stops the run (cancels ctx with errLost) once its lease is lost:
// its writes fail from then on, and another worker may drive it already.
func (w *Worker) watch(ctx context.Context, h *flower.Host, id string) (stop func()) {
	lost := h.Lost()
	if lost == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-lost:
			w.mu.Lock()
			if d := w.running[id]; d != nil {
				d.cancel(errLost)
			}
			w.mu.Unlock()
		case <-done:
		}
	}()
	return func() { close(done); wg.Wait() }
}

// follow runs the human channel's follower of the workspace's journal
// (answers, mail and interrupts put there through any flower serve
// --runs), nudged by the worker's one LISTEN connection, until stop.
func (w *Worker) follow(ctx context.Context, h *flower.Host, log io.Writer) (stop func()) {
	rt, ch := h.Runtime(), h.Channel()
	nudge := make(chan struct{}, 1)
	f, err := ch.Follow(human.FollowOptions{Interrupt: rt.Interrupt, Nudge: nudge, Poll: followPoll})
	if err != nil {
		return func() {}
	}
	// The first pass before the run goes on: what is in the journal by
	// then arrived while no process followed it.
	if err := f.Pass(ctx); err != nil {
		fmt.Fprintf(log, "flower: follow the human journal: %v\n", err)
	}
	key := store.SideLog(h.Workspace(), store.HumanJournal)
	w.mu.Lock()
	w.journals[key] = nudge
	w.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
		w.mu.Lock()
		if w.journals[key] == nudge {
			delete(w.journals, key)
		}
		w.mu.Unlock()
	}
}

// followPoll is how often a driven run's journal is read with no nudge.
// The worker's LISTEN connection nudges on every record put there and
// nudges every follower once it reconnects, so the poll only backs up a
// notification lost otherwise; at human.DefaultPoll, 64 runs read their
// journals ~30 times a second for nothing (issue 19).
const followPoll = 30 * time.Second

// lockedWriter serializes the writes of a run's goroutines to its log.
type lockedWriter struct {
	mu sync.Mutex // guards w
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
