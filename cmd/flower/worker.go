package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/worker"
)

// Workers and submission (issues 14, 19): flower submit queues a run in
// the database; flower worker, on any number of machines, claims runnable
// runs and drives them in process (package worker): flags and output
// here, the work there.

func newSubmit(g *globals) *cobra.Command {
	var askTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "submit TASK",
		Short: "Queue a run of TASK in --workspace for the workers of the --store database; prints its id",
		Long: `Queue a run of TASK in the workspace (--workspace, default .) in the database
named by --store or FLOWER_STORE. A flower worker on any machine that sees
the workspace at the same path (a shared filesystem) claims and drives it;
its questions wait the worker's --ask-timeout for an answer through flower
serve --runs (POST /runs/ID/answer).

The run is an ordinary run in flight: flower ps lists it, and flower --run
ID in the workspace drives it by hand.`,
		Args: needs("TASK", `say it in quotes, e.g. flower submit --workspace ~/proj "write the report"`),
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
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	if err := worker.CheckSubmit(ws, task); err != nil { // before the database is touched
		return usageErr("%v", err)
	}
	db, err := postgres.Open(ctx, u)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	defer db.Close()
	r, err := worker.Submitter(db)(ctx, ws, task, askTimeout)
	switch {
	case errors.Is(err, worker.ErrInvalid):
		return usageErr("%v", err)
	case err != nil:
		return &exitError{code: exitFailed, err: err}
	}
	fmt.Fprintln(out, r.ID)
	return nil
}

type workerFlags struct {
	concurrency int
	poll        time.Duration
	askTimeout  time.Duration // how long a driven run's question waits (0: unattended)
}

func newWorker(g *globals) *cobra.Command {
	f := &workerFlags{}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Claim and drive the runnable runs of the --store database, until SIGTERM",
		Long: `Claim runnable runs of the database named by --store or FLOWER_STORE (queued
by flower submit, or in flight with no live driver: their driver died) and
drive them in this process, each holding its workspace's lease; all of
them share a few connections to the database.

A question the agent asks waits --ask-timeout (default 10m) for an answer
through any flower serve --runs on the database (POST /runs/ID/answer),
then the agent goes on by its own judgement; 0 makes the runs unattended.

Workspaces must be at the same path on every worker (a shared
filesystem): a run whose workspace is missing here is left queued for
another worker, with one line saying so.

SIGTERM (or Ctrl-C) drains: no new claims; each run stops at its current
operation and its lease is released, so another worker finishes it. Each
run's events go to <run dir>/worker/RUN.log.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWorker(cmd.Context(), g, f, cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&f.concurrency, "concurrency", 1, "runs driven at once")
	cmd.Flags().DurationVar(&f.poll, "poll", time.Second, "how often to look for runnable runs")
	cmd.Flags().DurationVar(&f.askTimeout, "ask-timeout", worker.DefaultAskTimeout, "how long a question of a run waits for an answer through flower serve --runs (0: unattended)")
	return cmd
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
	db, err := postgres.Open(ctx, u, postgres.PoolSize(worker.PoolSize(f.concurrency)))
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	defer db.Close()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	host, _ := os.Hostname()
	fmt.Fprintf(out, "worker pid %d on %s: %d at once, taking runs from %s\n", os.Getpid(), host, f.concurrency, db)
	w := worker.New(worker.Options{DB: db, RunDir: runDir, Concurrency: f.concurrency, Poll: f.poll, AskTimeout: f.askTimeout,
		Model: g.model, IdleTimeout: g.idle, NoTrim: g.noTrim, Secrets: g.secrets, Out: out})
	if err := w.Run(ctx); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	return nil
}
