package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/flower-run/flower"
	mcpserver "github.com/flower-run/flower/front/mcp"
	"github.com/flower-run/flower/workflow"
)

// newMCP is flower mcp: flower as an MCP server over stdio (front/mcp),
// so that Claude Desktop, Claude Code or any MCP client drives durable
// flower runs, each in process.
func newMCP(g *globals) *cobra.Command {
	f, m := &wakeFlags{}, &mcpFlags{}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve MCP over stdio: start tasks, read their status and events, answer, note, interrupt",
		Long: `flower mcp is an MCP server on stdin/stdout. Its tools:

  task_start     {directory, task?, stop_with_client?}  flower "task" in directory (no task: continue)
  task_status    {directory}              running, waiting, passed, failed or stopped;
                                          run, step, questions waiting, cost, turns
  task_events    {directory, after?, kinds?, limit?, wait_s?, all?}  the events after
                                          seq N (deltas and usage records only with all)
  task_answer    {directory, id, text}    answer a waiting question (id: q1...)
  task_note      {directory, text}        a note to the agent's inbox
  task_interrupt {directory, text?}       stop at the next message boundary

Register it with a client, e.g. in Claude Code's .mcp.json:
  {"mcpServers": {"flower": {"command": "flower", "args": ["mcp"]}}}

Each task runs in a flower process of its own, in its own session, with
its output in mcp-task.log in the run dir: it goes on when the client ends
the session (and when flower mcp is killed), as flower in that directory
would. A later flower mcp, flower status or flower in the directory sees
it through the run dir's store; task_status, task_events, task_answer,
task_note and task_interrupt of any session reach it there. A task whose
process was killed continues with task_start (no task) or flower in its
directory; one process at a time drives a directory (its lock).

--tasks-stop-with-client (or task_start's stop_with_client) runs tasks
inside flower mcp instead: when the client ends the session they stop
at their next message boundary and continue the same way.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serveMCP(cmd.Context(), g, f, m)
		},
	}
	fl := cmd.Flags()
	fl.Float64Var(&f.timeout, "timeout", 1800, "seconds a question waits for task_answer; 0: unattended (never wait); -1: forever")
	fl.IntVar(&f.rounds, "rounds", 3, "work rounds after a failed verdict (0: judge once, no rework)")
	fl.IntVar(&f.maxTurns, "max-turns", 100, "model responses per step")
	fl.Float64Var(&f.budget, "budget", 0, "USD per step (0: no limit)")
	fl.BoolVar(&m.stopWithClient, "tasks-stop-with-client", false, "run tasks inside flower mcp: they stop when the client ends the session")
	fl.BoolVar(&m.drive, "drive", false, "be one task's own process (task_start runs it)")
	_ = fl.MarkHidden("drive")
	return cmd
}

// mcpFlags are flower mcp's own.
type mcpFlags struct {
	stopWithClient bool
	drive          bool
}

func serveMCP(ctx context.Context, g *globals, f *wakeFlags, m *mcpFlags) error {
	if err := checkAsks(f.timeout, -1); err != nil {
		return err
	}
	if err := checkRounds(f.rounds); err != nil {
		return err
	}
	if err := checkLimits(g.model, f.maxTurns, f.budget); err != nil {
		return err
	}
	u, err := g.storeURL()
	if err != nil {
		return err
	}
	o := mcpserver.Options{Version: version(), Model: g.model, StoreURL: u, IdleTimeout: g.idle,
		NoTrim: g.noTrim, Secrets: g.secrets, RunDir: mcpRunDir, AskTimeout: timeout(f.timeout),
		Rounds: judgeRounds(f.rounds), MaxTurns: f.maxTurns, Budget: f.budget}
	if !m.stopWithClient && !m.drive {
		o.Command = mcpserver.Self("--drive") // nil if it cannot find itself: tasks in process
	}
	srv := mcpserver.New(o)
	ctx, stop := killable(ctx)
	defer stop()
	if m.drive {
		err = srv.Drive(ctx, os.Stdin, mcpserver.ReadyFile())
	} else {
		err = srv.Run(ctx, &sdk.StdioTransport{})
	}
	if err != nil && ctx.Err() == nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("mcp: %w", err)}
	}
	return nil
}

// mcpRunDir is the run dir of a task's directory, as flower run there
// would choose it.
func mcpRunDir(ws string) string {
	dir, _, _ := flower.ChooseRunDir(ws, ws)
	return dir // "" when there is none: Open says why
}

// killable cancels ctx with the cause killed-by-signal on SIGTERM, SIGHUP
// or Ctrl-C: the tasks are cut at once, their steps recorded as cut.
func killable(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			killedBy.Store(s) // main exits as the signal would
			cancel(workflow.ErrKilledBySignal)
		case <-done:
		}
	}()
	return ctx, func() { signal.Stop(sig); close(done); cancel(nil) }
}
