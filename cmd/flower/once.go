package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/front/term"
)

const onceInstructions = `You are flower, an agent that does software and writing tasks in the working directory with the tools you have.
Work step by step: look before you change, make the change, then check it (run it, read it back).
Keep the person informed with short messages. When the task is done, end your turn with a brief summary of what you did and how you checked it.`

type onceFlags struct {
	resume   string
	fork     bool
	maxTurns int
	budget   float64
}

func newOnce(g *globals) *cobra.Command {
	f := &onceFlags{}
	cmd := &cobra.Command{
		Use:   "once [--resume SESSION] PROMPT",
		Short: "Run one agent on PROMPT, no workflow and no lineage",
		Long: `Run one agent on PROMPT and stream what it does: its text, each tool call as
[Tool] summary, and errors. It ends with the session id, turns and cost.
--resume continues a session with its full history; with no PROMPT it only
finishes what the session left undone (after a crash, say).

Exit codes: 0 done, 1 failed, 2 usage, 130 interrupted (Ctrl-C stops at the
next message boundary; a second Ctrl-C exits at once).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prompt := ""
			if len(args) == 1 {
				prompt = args[0]
			}
			if prompt == "" && f.resume == "" {
				return usageErr(`once needs a PROMPT, e.g. flower once "create hello.txt"`)
			}
			return runOnce(cmd.Context(), g, f, prompt, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.resume, "resume", "", "continue this session id")
	fl.BoolVar(&f.fork, "fork", false, "with --resume: branch into a new session, leaving the original untouched")
	fl.IntVar(&f.maxTurns, "max-turns", 100, "stop after this many model responses")
	fl.Float64Var(&f.budget, "budget", 0, "stop once this many USD are spent (0: no limit)")
	return cmd
}

func runOnce(ctx context.Context, g *globals, f *onceFlags, prompt string, out io.Writer) error {
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	cfg, err := loadConfig(ws) // first: it may declare the prices --budget needs
	if err != nil {
		return err
	}
	if err := checkLimits(g.model, f.maxTurns, f.budget); err != nil {
		return err
	}
	b, err := chooseBackend(g.model, modelClient(g, cfg))
	if err != nil {
		return err
	}
	defer b.release()
	s, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	box, err := contain(cfg, g.workspace, out)
	if err != nil {
		return err
	}
	defer box.Close()
	sources, closeMCP, err := mcpServers(g.workspace, cfg, out)
	if err != nil {
		return err
	}
	defer closeMCP()
	// No one answers questions in once: an ask rule denies (R9.3).
	rt, err := agent.New(agent.Options{Workspace: g.workspace, Store: s, Provider: b.provider,
		Retry: b.retrier(), Trim: !g.noTrim, Policies: cfg.Policies(),
		ToolEnv: box.toolEnv(toolEnv(ws, g.runDir)), Secrets: knownSecrets(cfg), Permissions: box.rules, Sources: sources})
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if f.resume != "" && !rt.HasSession(f.resume) {
		return usageErr("no session %s for workspace %s in %s: check the id printed at the end of the earlier run, and -r / --workspace", f.resume, rt.Workspace(), filepath.Join(g.runDir, "sessions.db"))
	}
	ctx, stop := interruptible(ctx, rt, os.Stderr, nil)
	defer stop()
	r := term.NewRenderer(out)
	spec := agent.Spec{Name: "once", Instructions: onceInstructions, Model: b.model,
		MaxTurns: f.maxTurns, MaxBudget: f.budget}
	res := rt.Run(ctx, spec, prompt, agent.RunOptions{Resume: f.resume, Fork: f.fork, Sink: redacting(knownSecrets(cfg), r.Render)})
	fmt.Fprintf(out, "\nsession %s · %d turns · $%.4f · context %s\n", res.SessionID, res.Turns, res.Cost, kilo(res.Context))
	return onceExit(ctx, res)
}

func onceExit(ctx context.Context, res agent.Result) error {
	switch {
	case res.OK:
		return nil
	case ctx.Err() != nil || res.Error == "interrupted":
		return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted: continue with flower once --resume %s", res.SessionID)}
	default:
		return &exitError{code: exitFailed, err: fmt.Errorf("%s (continue with flower once --resume %s)", res.Error, res.SessionID)}
	}
}

// kilo renders a token count as 80.2K.
func kilo(n int) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%.1fK", float64(n)/1000)
}
