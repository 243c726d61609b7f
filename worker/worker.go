// Package worker drives the runs of a PostgreSQL store in process (issue
// 19): Submit queues a run; a Worker claims runnable runs (queued, or in
// flight with no live lease: their driver died or stopped) and drives
// each as a goroutine through package flower, all of them over the one
// *postgres.DB it was given: one pool, one lease session holding the
// advisory locks of all its runs, one LISTEN connection for the answers
// and interrupts people send through any flower serve --runs. A lease
// refused because another worker got there first is skipped quietly
// (store.ErrBusy); a run that failed is tried again later, backing off; a
// worker with nothing to do polls less and less often. Cancelling Run's
// context drains: no new claims, every run stops at its current operation
// (its step row says killed-by-signal), its lease is released, and
// another worker finishes it.
//
//	db, err := postgres.Open(ctx, url, postgres.PoolSize(worker.PoolSize(32)))
//	w := worker.New(worker.Options{DB: db, RunDir: dir, Concurrency: 32})
//	err := w.Run(ctx) // until ctx ends, then drains
package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/workflow"
)

// PoolSize is the size of the connection pool a worker of concurrency
// runs wants (postgres.PoolSize): its runs spend most of their time
// waiting for the model, so a quarter of them write or read at once at
// most, plus a few for the claims; with the lease session and the LISTEN
// connection, 32 runs cost 14 connections (issue 19).
func PoolSize(concurrency int) int { return min(concurrency/4+4, 32) }

// Options configure a Worker.
type Options struct {
	// DB is the store the runs are in; the Worker uses it and leaves it
	// open. Required.
	DB *postgres.DB
	// RunDir holds the run dirs of the workspaces this worker drives (one
	// per workspace, named by flower.RunDirName) and, in worker/, each
	// run's log, RUN.log.
	RunDir string
	// Concurrency is how many runs are driven at once (default 1).
	Concurrency int
	// Poll is how soon a worker with nothing to do looks again (default
	// 1 s); each empty look doubles the wait, up to MaxPoll (default
	// 8 × Poll). A run that ends, or one found, resets it.
	Poll, MaxPoll time.Duration
	// AskTimeout is how long a question waits for an answer through
	// flower serve --runs when the run was submitted without one (0:
	// unattended; flower worker's default is DefaultAskTimeout).
	AskTimeout time.Duration
	// Model, IdleTimeout, NoTrim and Secrets are flower.Options'.
	Model       string
	IdleTimeout time.Duration
	NoTrim      bool
	Secrets     []string
	// Drive shapes every run (the zero value: 3 work rounds, 100 turns a
	// step, no budget, as flower's defaults).
	Drive flower.DriveOptions
	// Out receives one line per claim, end, failure and skipped run; nil
	// discards them.
	Out io.Writer
	// Clock is the time the worker waits on; nil is the real one.
	Clock Clock
}

// DefaultAskTimeout is how long a question of a worker's run waits for an
// answer through flower serve --runs: long enough for someone watching a
// dashboard to answer, short enough that a run nobody watches holds its
// worker's slot for minutes, not the half hour a terminal waits.
const DefaultAskTimeout = 10 * time.Minute

// A Clock tells time and waits: the worker's waits go through it, so a
// test can step them.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Worker claims and drives runs. Make one with New; Run it once.
type Worker struct {
	o     Options
	db    *postgres.DB
	out   io.Writer
	clock Clock
	slots chan struct{}
	freed chan struct{} // a run ended: a slot may be free
	wg    sync.WaitGroup

	mu       sync.Mutex           // guards the fields below
	running  map[string]*driven   // run id -> its driver
	missing  map[string]bool      // workspaces said missing, said once
	retry    map[string]time.Time // run id -> not before, after a failure
	fails    map[string]int
	journals map[string]chan struct{} // a driven run's journal key -> its follower's nudge
	draining bool
}

// driven is a run this worker drives.
type driven struct {
	run    store.Run
	cancel context.CancelCauseFunc
}

// New makes a Worker.
func New(o Options) *Worker {
	o.Concurrency = max(o.Concurrency, 1)
	o.Poll = cmp.Or(o.Poll, time.Second)
	o.MaxPoll = max(cmp.Or(o.MaxPoll, 8*o.Poll), o.Poll)
	if o.Drive == (flower.DriveOptions{}) {
		o.Drive = flower.DriveOptions{Rounds: 3, MaxTurns: 100}
	}
	w := &Worker{o: o, db: o.DB, out: o.Out, clock: o.Clock, slots: make(chan struct{}, o.Concurrency),
		freed: make(chan struct{}, 1), running: map[string]*driven{}, missing: map[string]bool{},
		retry: map[string]time.Time{}, fails: map[string]int{}, journals: map[string]chan struct{}{}}
	if w.out == nil {
		w.out = io.Discard
	}
	if w.clock == nil {
		w.clock = realClock{}
	}
	return w
}

// Run claims and drives runs until ctx ends, then drains: it stops
// claiming, stops every run at its current operation, waits for them and
// releases their leases. It returns nil after a drain; an error only when
// it cannot work at all.
func (w *Worker) Run(ctx context.Context) error {
	if w.db == nil {
		return errors.New("worker: Options.DB is required")
	}
	lctx, stopListen := context.WithCancel(context.WithoutCancel(ctx))
	listening := make(chan struct{})
	go func() {
		defer close(listening)
		w.db.Listen(lctx, postgres.InboundChannel, w.nudge)
	}()
	defer func() { stopListen(); <-listening }()
	var wait time.Duration // 0: the next wait is Poll
	for {
		found, err := w.claim(ctx)
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(w.out, "worker: %v (trying again)\n", err)
		}
		if found || wait == 0 {
			wait = w.o.Poll
		} else {
			wait = min(2*wait, w.o.MaxPoll)
		}
		select {
		case <-ctx.Done():
			w.drain()
			return nil
		case <-w.freed:
			wait = 0
		case <-w.clock.After(wait):
		}
	}
}

// claim starts a driver for each runnable run while there are free slots,
// and reports whether there was any.
func (w *Worker) claim(ctx context.Context) (bool, error) {
	if len(w.slots) == cap(w.slots) {
		return true, nil // nothing to claim with until a run ends (freed)
	}
	runs, err := w.runnable(ctx)
	if err != nil {
		return false, err
	}
	for _, r := range runs {
		if ctx.Err() != nil {
			return true, nil
		}
		select {
		case w.slots <- struct{}{}:
		default:
			return true, nil // all slots busy
		}
		w.start(ctx, r)
	}
	return len(runs) > 0, nil
}

// runnable lists the runs this worker could drive now, oldest first, one
// per workspace: in flight, nobody holds the workspace's lease, not
// waiting out a failure here, the workspace here.
func (w *Worker) runnable(ctx context.Context) ([]store.Run, error) {
	runs, err := w.db.RunsWith(ctx, store.RunInFlight)
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	holders, err := w.db.Holders(ctx)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	busy := map[string]bool{}
	for _, d := range w.running {
		busy[d.run.Workspace] = true
	}
	var out []store.Run
	now := w.clock.Now()
	for _, r := range runs {
		if r.Status != store.RunInFlight || holders[r.Workspace].Live || busy[r.Workspace] || now.Before(w.retry[r.ID]) {
			continue
		}
		if _, err := os.Stat(r.Workspace); err != nil {
			if !w.missing[r.Workspace] {
				w.missing[r.Workspace] = true
				fmt.Fprintf(w.out, "worker: run %s: workspace %s is missing on this worker (workspaces must be on a shared filesystem): left queued for another\n", r.ID, r.Workspace)
			}
			continue
		}
		busy[r.Workspace] = true
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b store.Run) int { return a.Created.Compare(b.Created) })
	return out, nil
}

// start drives r in a goroutine of its own; the slot it took is given
// back when the run ends.
func (w *Worker) start(ctx context.Context, r store.Run) {
	// A run is stopped by the drain or a lost lease, never by the end of
	// the claim loop's context as such: the drain decides when.
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	d := &driven{run: r, cancel: cancel}
	w.mu.Lock()
	w.running[r.ID] = d
	if w.draining {
		cancel(errDrained)
	}
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		err := w.drive(rctx, r)
		cause := context.Cause(rctx)
		cancel(nil)
		w.done(r, err, cause)
		<-w.slots
		select {
		case w.freed <- struct{}{}:
		default:
		}
	}()
}

// errDrained and errLost are why a run was stopped.
var (
	errDrained = workflow.ErrKilledBySignal // as SIGTERM to a terminal's run: the step row says so
	errLost    = errors.New("lease lost")
)

// done records how a run's drive ended. A lease refused lost a race to
// another worker; a failure is tried again later, backing off.
func (w *Worker) done(r store.Run, err, cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.running, r.ID)
	switch {
	case errors.Is(err, store.ErrBusy):
		fmt.Fprintf(w.out, "worker: run %s: another driver took it first\n", r.ID)
	case errors.Is(cause, errDrained):
		fmt.Fprintf(w.out, "worker: run %s stopped (draining): another worker finishes it\n", r.ID)
	case errors.Is(cause, errLost) || errors.Is(err, postgres.ErrLost):
		fmt.Fprintf(w.out, "worker: run %s: its lease was lost: another worker finishes it\n", r.ID)
	case err == nil:
		delete(w.fails, r.ID)
		fmt.Fprintf(w.out, "worker: run %s ended\n", r.ID)
	default:
		w.fails[r.ID]++
		wait := min(time.Second<<min(w.fails[r.ID], 8), 5*time.Minute)
		w.retry[r.ID] = w.clock.Now().Add(wait)
		fmt.Fprintf(w.out, "worker: run %s: driver failed (%v): retrying in %v, see %s\n", r.ID, err, wait, w.logPath(r.ID))
	}
}

// drain stops claiming and every run at its current operation, then
// waits for them.
func (w *Worker) drain() {
	w.mu.Lock()
	w.draining = true
	n := len(w.running)
	for _, d := range w.running {
		d.cancel(errDrained)
	}
	w.mu.Unlock()
	fmt.Fprintf(w.out, "worker: draining %d driver(s)\n", n)
	w.wg.Wait()
	fmt.Fprintln(w.out, "worker: drained")
}

// Running lists the ids of the runs driven now.
func (w *Worker) Running() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ids []string
	for id := range w.running {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (w *Worker) logPath(id string) string { return filepath.Join(w.o.RunDir, "worker", id+".log") }

// nudge passes a notification on to the follower of the journal it names
// ("" : all of them, as after a reconnection).
func (w *Worker) nudge(payload string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, ch := range w.journals {
		if payload == "" || payload == key {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}
