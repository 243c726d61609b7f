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
	f := &wakeFlags{}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve MCP over stdio: start tasks, read their status and events, answer, note, interrupt",
		Long: `flower mcp is an MCP server on stdin/stdout. Its tools:

  task_start     {directory, task?}       flower "task" in directory (no task: continue)
  task_status    {directory}              running, waiting, passed, failed or stopped;
                                          run, step, questions waiting, cost, turns
  task_events    {directory, after?, wait_s?, all?}  the events after seq N
                                          (deltas and usage records only with all)
  task_answer    {directory, id, text}    answer a waiting question (id: q1...)
  task_note      {directory, text}        a note to the agent's inbox
  task_interrupt {directory, text?}       stop at the next message boundary

Register it with a client, e.g. in Claude Code's .mcp.json:
  {"mcpServers": {"flower": {"command": "flower", "args": ["mcp"]}}}

The tasks run inside flower mcp. When the client ends the session (it
exits, closing flower mcp's stdin), every task stops at its next message
boundary and says so; nothing is lost: task_start again, or flower in the
task's directory, continues it. A terminating signal cuts the tasks at
once (their step is recorded as cut; they continue the same way).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serveMCP(cmd.Context(), g, f)
		},
	}
	fl := cmd.Flags()
	fl.Float64Var(&f.timeout, "timeout", 1800, "seconds a question waits for task_answer; 0: unattended (never wait); -1: forever")
	fl.IntVar(&f.rounds, "rounds", 3, "work rounds after a failed verdict (0: judge once, no rework)")
	fl.IntVar(&f.maxTurns, "max-turns", 100, "model responses per step")
	fl.Float64Var(&f.budget, "budget", 0, "USD per step (0: no limit)")
	return cmd
}

func serveMCP(ctx context.Context, g *globals, f *wakeFlags) error {
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
	srv := mcpserver.New(mcpserver.Options{Version: version(), Model: g.model, StoreURL: u, IdleTimeout: g.idle,
		NoTrim: g.noTrim, Secrets: g.secrets, RunDir: mcpRunDir, AskTimeout: timeout(f.timeout),
		Rounds: judgeRounds(f.rounds), MaxTurns: f.maxTurns, Budget: f.budget})
	ctx, stop := killable(ctx)
	defer stop()
	if err := srv.Run(ctx, &sdk.StdioTransport{}); err != nil && ctx.Err() == nil {
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
