package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/workflow/starter"
)

// Workers and submission (issue 14): flower submit queues a run in the
// database; flower worker, on any number of machines, claims runnable
// runs and drives each in a flower process of its own, which takes the
// workspace's lease itself, so the lease lives and dies with the process
// that writes (store/postgres, Lease).

func newSubmit(g *globals) *cobra.Command {
	var askTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "submit TASK",
		Short: "Queue a run of TASK in --workspace for the workers of the --store database; prints its id",
		Long: `Queue a run of TASK in the workspace (--workspace, default .) in the database
named by --store or FLOWER_STORE. A flower worker on any machine that sees
the workspace at the same path (a shared filesystem) claims and drives it;
its questions wait the worker's --ask-timeout for an answer through flower
serve --runs (POST /runs/ID/answer). The run is an ordinary run in flight: flower ps lists it, and
flower --run ID in the workspace drives it by hand.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var t *float64
			if cmd.Flags().Changed("ask-timeout") {
				if askTimeout < 0 {
					return usageErr("--ask-timeout %v: want a duration, e.g. 10m, or 0 for an unattended run", askTimeout)
				}
				t = new(askTimeout.Seconds())
			}
			return runSubmit(cmd.Context(), g, args[0], t, cmd.OutOrStdout())
		},
	}
	cmd.Flags().DurationVar(&askTimeout, "ask-timeout", 0, "how long this run's questions wait for an answer through flower serve --runs (0: unattended; default: the worker's --ask-timeout)")
	return cmd
}

func runSubmit(ctx context.Context, g *globals, task string, askTimeout *float64, out io.Writer) error {
	u, err := g.storeURL()
	if err != nil {
		return err
	}
	if u == "" {
		return usageErr("submit needs the workers' database: pass --store postgres://... or set %s", storeEnv)
	}
	if strings.TrimSpace(task) == "" {
		return usageErr(`submit needs a task, e.g. flower submit "fix the flaky test"`)
	}
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return usageErr("--workspace %s: not a directory: workers need it at this path on a shared filesystem", ws)
	}
	db, err := postgres.Open(ctx, u)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	defer db.Close()
	r, err := submitRun(ctx, db, ws, task, askTimeout)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, r.ID)
	return nil
}

// submitRun queues a run of task in ws: a run in flight that no process
// drives yet, whose questions wait askTimeout seconds (nil: as long as
// the worker says).
func submitRun(ctx context.Context, db store.Store, ws, task string, askTimeout *float64) (store.Run, error) {
	task = strings.TrimSpace(task)
	if task == "" {
		return store.Run{}, usageErr(`submit needs a task, e.g. flower submit "fix the flaky test"`)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return store.Run{}, usageErr("workspace %s: not a directory: workers need it at this path on a shared filesystem", ws)
	}
	now := time.Now()
	r := store.Run{ID: runID(now), Workspace: ws, Status: store.RunInFlight, Created: now, Updated: now, AskTimeout: askTimeout}
	// On a confirmed brief the words are an addition to the thread's task,
	// as for flower "..." in that workspace (R3.9).
	if starter.WakeState(ws, db).Waking {
		r.Phrase = task
	} else {
		r.Task = task
	}
	if err := db.Commit(ctx, store.Batch{Run: &r}); err != nil {
		return store.Run{}, &exitError{code: exitFailed, err: err}
	}
	return r, nil
}

// runID is a run id as the engine makes them: time, then 6 hex digits.
func runID(now time.Time) string {
	b := make([]byte, 3)
	rand.Read(b)
	return now.Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

type workerFlags struct {
	concurrency int
	poll        time.Duration
	askTimeout  time.Duration // how long a driven run's question waits (0: unattended)
}

// defaultAskTimeout is how long a question of a worker's run waits for an
// answer through flower serve --runs: long enough for someone watching a
// dashboard to answer, short enough that a run nobody watches holds its
// worker's slot for minutes, not the half hour a terminal waits.
const defaultAskTimeout = 10 * time.Minute

func newWorker(g *globals) *cobra.Command {
	f := &workerFlags{}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Claim and drive the runnable runs of the --store database, until SIGTERM",
		Long: `Claim runnable runs of the database named by --store or FLOWER_STORE (queued
by flower submit, or in flight with no live driver: their driver died) and
drive each in a flower process of its own that holds the workspace's
lease. A question the agent asks waits --ask-timeout (default 10m) for an
answer through any flower serve --runs on the database (POST
/runs/ID/answer), then the agent goes on by its own judgement; 0 makes the
runs unattended. Workspaces must be at the same path on every worker (a
shared filesystem): a run whose workspace is missing here is left queued
for another worker, with one line saying so. SIGTERM (or Ctrl-C) drains:
no new claims; each driver stops at its current operation and releases its
lease, so another worker finishes the run. Each driver's output goes to
<run dir>/worker/RUN.log.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWorker(cmd.Context(), g, f, cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&f.concurrency, "concurrency", 1, "runs driven at once")
	cmd.Flags().DurationVar(&f.poll, "poll", time.Second, "how often to look for runnable runs")
	cmd.Flags().DurationVar(&f.askTimeout, "ask-timeout", defaultAskTimeout, "how long a question of a run waits for an answer through flower serve --runs (0: unattended)")
	return cmd
}

// worker is the state of one flower worker.
type worker struct {
	g      *globals
	url    string
	runDir string
	out    io.Writer
	db     *postgres.DB
	slots  chan struct{}
	wg     sync.WaitGroup

	askTimeout time.Duration

	mu      sync.Mutex
	running map[string]*exec.Cmd // run id -> its driver
	missing map[string]bool      // workspaces said missing, said once
	retry   map[string]time.Time // run id -> not before, after a failed driver
	fails   map[string]int
}

func runWorker(ctx context.Context, g *globals, f *workerFlags, out io.Writer) error {
	u, err := g.storeURL()
	if err != nil {
		return err
	}
	if u == "" {
		return usageErr("worker needs the database to take runs from: pass --store postgres://... or set %s", storeEnv)
	}
	if f.concurrency < 1 {
		return usageErr("--concurrency %d: want at least 1", f.concurrency)
	}
	if f.poll <= 0 {
		return usageErr("--poll %v: want a positive duration, e.g. 1s", f.poll)
	}
	if f.askTimeout < 0 {
		return usageErr("--ask-timeout %v: want a duration, e.g. 10m, or 0 for unattended runs", f.askTimeout)
	}
	runDir, err := filepath.Abs(g.runDir)
	if err != nil {
		return usageErr("--run-dir: %v", err)
	}
	db, err := postgres.Open(ctx, u)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	defer db.Close()
	w := &worker{g: g, url: u, runDir: runDir, out: out, db: db, slots: make(chan struct{}, f.concurrency), askTimeout: f.askTimeout,
		running: map[string]*exec.Cmd{}, missing: map[string]bool{}, retry: map[string]time.Time{}, fails: map[string]int{}}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	host, _ := os.Hostname()
	fmt.Fprintf(out, "worker pid %d on %s: %d at once, taking runs from %s\n", os.Getpid(), host, f.concurrency, db)
	t := time.NewTicker(f.poll)
	defer t.Stop()
	for {
		if err := w.claim(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintf(out, "worker: %v (trying again)\n", err)
		}
		select {
		case <-ctx.Done():
			w.drain()
			return nil
		case <-t.C:
		}
	}
}

// claim starts a driver for each runnable run while there are free
// slots. Runnable: in flight, and nobody holds its workspace's lease. Two
// workers may pick the same run at once: the lease admits one driver,
// and the other's exits refused.
func (w *worker) claim(ctx context.Context) error {
	runs, err := w.runnable(ctx)
	if err != nil {
		return err
	}
	for _, r := range runs {
		if ctx.Err() != nil {
			return nil
		}
		select {
		case w.slots <- struct{}{}:
		default:
			return nil // all slots busy
		}
		if !w.start(ctx, r) {
			<-w.slots
		}
	}
	return nil
}

// runnable lists the runs this worker could drive now, oldest first, one
// per workspace.
func (w *worker) runnable(ctx context.Context) ([]store.Run, error) {
	runs, err := w.db.Runs(ctx, "")
	if err != nil {
		return nil, err
	}
	holders, err := w.db.Holders(ctx)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	busy := map[string]bool{}
	for _, r := range w.running {
		busy[r.Dir] = true
	}
	var out []store.Run
	now := time.Now()
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
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

// start launches the driver of run r; false if it could not start.
func (w *worker) start(ctx context.Context, r store.Run) bool {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(w.out, "worker: %v\n", err)
		return false
	}
	logDir := filepath.Join(w.runDir, "worker")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		fmt.Fprintf(w.out, "worker: %v\n", err)
		return false
	}
	log, err := os.OpenFile(filepath.Join(logDir, r.ID+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintf(w.out, "worker: %v\n", err)
		return false
	}
	args := []string{"--store", w.url, "-r", filepath.Join(w.runDir, store.ProjectKey(r.Workspace)),
		"--workspace", r.Workspace, "--run", r.ID, "--timeout", strconv.FormatFloat(w.askTimeoutOf(r), 'f', -1, 64)}
	if w.g.model != "" {
		args = append(args, "--model", w.g.model)
	}
	if w.g.noTrim {
		args = append(args, "--no-trim")
	}
	cmd := exec.Command(self, args...)
	cmd.Dir = r.Workspace
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = driverAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		fmt.Fprintf(w.out, "worker: run %s: %v\n", r.ID, err)
		return false
	}
	w.mu.Lock()
	w.running[r.ID] = cmd
	w.mu.Unlock()
	fmt.Fprintf(w.out, "worker: claimed run %s in %s (driver pid %d)\n", r.ID, r.Workspace, cmd.Process.Pid)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		err := cmd.Wait()
		log.Close()
		w.done(ctx, r, err)
		<-w.slots
	}()
	return true
}

// askTimeoutOf is how long, in seconds, a question of run r waits: as
// submitted, else the worker's --ask-timeout.
func (w *worker) askTimeoutOf(r store.Run) float64 {
	if r.AskTimeout != nil && *r.AskTimeout >= 0 {
		return *r.AskTimeout
	}
	return w.askTimeout.Seconds()
}

// done records how a driver ended. A driver refused by the lease lost a
// race to another worker; one that failed is retried later, backing off.
func (w *worker) done(ctx context.Context, r store.Run, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.running, r.ID)
	var ee *exec.ExitError
	switch {
	case err == nil:
		delete(w.fails, r.ID)
		fmt.Fprintf(w.out, "worker: run %s ended\n", r.ID)
	case ctx.Err() != nil:
		fmt.Fprintf(w.out, "worker: run %s stopped (draining): another worker finishes it\n", r.ID)
	case errors.As(err, &ee) && ee.ExitCode() == exitFailed && driverRefused(w.runDir, r.ID):
		fmt.Fprintf(w.out, "worker: run %s: another driver took it first\n", r.ID)
	default:
		w.fails[r.ID]++
		wait := min(time.Second<<min(w.fails[r.ID], 8), 5*time.Minute)
		w.retry[r.ID] = time.Now().Add(wait)
		fmt.Fprintf(w.out, "worker: run %s: driver failed (%v): retrying in %v, see %s\n", r.ID, err, wait,
			filepath.Join(w.runDir, "worker", r.ID+".log"))
	}
}

// driverRefused reports whether the driver's log ends with the lease's
// refusal.
func driverRefused(runDir, id string) bool {
	data, err := os.ReadFile(filepath.Join(runDir, "worker", id+".log"))
	if err != nil {
		return false
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Contains(lines[len(lines)-1], "in use")
}

// drain stops claiming and has every driver stop at its current
// operation (SIGTERM: the step's row says killed-by-signal, the lease is
// released as the driver exits), then waits for them.
func (w *worker) drain() {
	w.mu.Lock()
	n := len(w.running)
	for _, cmd := range w.running {
		cmd.Process.Signal(syscall.SIGTERM)
	}
	w.mu.Unlock()
	fmt.Fprintf(w.out, "worker: draining %d driver(s)\n", n)
	w.wg.Wait()
	fmt.Fprintln(w.out, "worker: drained")
}
