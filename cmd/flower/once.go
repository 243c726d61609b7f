package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/front/script"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/resilience"
)

type onceFlags struct {
	resume   string
	file     string // -f: the prompt's file
	format   string // --output-format
	fork     bool
	maxTurns int
	budget   float64

	offlineTimeout time.Duration
}

func newOnce(g *globals) *cobra.Command {
	f := &onceFlags{}
	cmd := &cobra.Command{
		Use:   "once [--resume SESSION] [PROMPT | -f FILE | -]",
		Short: "Run one agent on PROMPT, no workflow and no lineage",
		Long: `Run one agent on PROMPT and stream what it does: its text, each tool call as
[Tool] summary, and errors. It ends with the session id, turns and cost.
--resume continues a session with its full history (a unique prefix of its
id will do: flower sessions lists them); with no PROMPT it only finishes
what the session left undone (after a crash, say).

For scripts, as Claude Code's -p: the prompt comes from -f FILE, from
standard input with PROMPT "-" or when no PROMPT is given and standard
input is not a terminal (echo "..." | flower once); --output-format text
prints only the final result, json one object (session_id, result,
is_error, num_turns, total_cost_usd, duration_ms, usage), stream-json one
event per line as GET /events serves them, then that object.

Exit codes: 0 done, 1 failed, 2 usage, 75 offline longer than
--offline-timeout, 130 interrupted (Ctrl-C stops at the next message
boundary; a second Ctrl-C exits at once).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := script.Check(f.format); err != nil {
				return usageErr("%v", err)
			}
			prompt, err := script.Prompt(args, f.file, cmd.InOrStdin())
			if err != nil {
				return fail(err)
			}
			if prompt, err = slashPrompt(g, prompt); err != nil {
				return err
			}
			if prompt == "" && f.resume == "" {
				return usageErr(`once needs a PROMPT, e.g. flower once "create hello.txt"`)
			}
			return runOnce(cmd.Context(), g, f, prompt, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.resume, "resume", "", "continue this session (its id, or a unique prefix of it)")
	fl.StringVarP(&f.file, "file", "f", "", `read the prompt from FILE ("-": standard input)`)
	fl.StringVar(&f.format, "output-format", "", "text (the result only), json (one object at the end) or stream-json (one event per line); default: the live transcript")
	fl.BoolVar(&f.fork, "fork", false, "with --resume: branch into a new session, leaving the original untouched")
	fl.IntVar(&f.maxTurns, "max-turns", 100, "stop after this many model responses")
	fl.Float64Var(&f.budget, "budget", 0, "stop once this many USD are spent (0: no limit)")
	fl.DurationVar(&f.offlineTimeout, "offline-timeout", 10*time.Minute, "give up (exit 75) when the model's endpoint stays unreachable this long")
	return cmd
}

func runOnce(ctx context.Context, g *globals, f *onceFlags, prompt string, out io.Writer) error {
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	cfg, err := flower.LoadConfig(ws) // first: it may declare the prices --budget needs
	if err != nil {
		return fail(err)
	}
	if err := checkLimits(g.model, f.maxTurns, f.budget); err != nil {
		return err
	}
	h, err := g.openHost(ctx, cfg, out)
	if err != nil {
		return err
	}
	defer h.Close()
	// No one answers questions in once: an ask rule denies (R9.3).
	if err := h.Start(ctx, flower.StartOptions{OfflineTimeout: f.offlineTimeout}); err != nil {
		return fail(err)
	}
	rt := h.Runtime()
	if f.resume != "" {
		if f.resume, err = resolveSession(ctx, h.Store(), rt.Workspace(), f.resume); err != nil {
			return err
		}
		if err := h.CheckSession(f.resume); err != nil {
			return fail(err)
		}
	}
	ctx, stop := interruptible(ctx, rt, os.Stderr, nil)
	defer stop()
	o := script.New(f.format, out)
	o.SetModel(h.Backend().Model)
	stopSpin := o.Spin(ctx) // the human format's spinner, from the first model call (issue 11)
	res := h.Once(ctx, prompt, flower.OnceOptions{Resume: f.resume, Fork: f.fork, MaxTurns: f.maxTurns, Budget: f.budget, Sink: o.Sink})
	stopSpin()
	o.Done(res)
	return onceExit(ctx, res)
}

func onceExit(ctx context.Context, res agent.Result) error {
	switch {
	case res.OK:
		return nil
	case errors.Is(res.Err, resilience.ErrOffline):
		return &exitError{code: exitOffline, err: fmt.Errorf("%s: check the network (or ANTHROPIC_BASE_URL/OPENAI_BASE_URL), then continue with flower once --resume %s", res.Error, res.SessionID)}
	case ctx.Err() != nil || res.Error == "interrupted":
		return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted: continue with flower once --resume %s", res.SessionID)}
	case model.Fix(res.Err) != "":
		return &exitError{code: exitFailed, err: fmt.Errorf("%s: %s, then continue with flower once --resume %s", res.Error, model.Fix(res.Err), res.SessionID)}
	default:
		return &exitError{code: exitFailed, err: fmt.Errorf("%s (continue with flower once --resume %s)", res.Error, res.SessionID)}
	}
}
