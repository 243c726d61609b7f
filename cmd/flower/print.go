package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/headless"
	"github.com/flower-run/flower/front/script"
	"github.com/flower-run/flower/permission"
)

// printFlags are claude -p's flags (front/headless).
type printFlags struct {
	print, verbose, cont, fork, debug            bool
	resume, sessionID, system, appendSys, schema string
	hf                                           headless.Flags
	maxTurns                                     int
	budget                                       float64
	cfg                                          headless.Config
}

// printArgs routes a Claude Code command line (flower -p ..., or the
// Claude Agent SDK's) to the print command (headless.Route).
func printArgs(root *cobra.Command, args []string) []string {
	isCommand := func(w string) bool {
		for _, c := range root.Commands() {
			if c.Name() == w || c.HasAlias(w) {
				return true
			}
		}
		return w == "help"
	}
	if headless.Route(args, isCommand) {
		return append([]string{"print"}, args...)
	}
	return args
}

func newPrint(g *globals) *cobra.Command {
	f := &printFlags{}
	cmd := &cobra.Command{
		Use:    "print [PROMPT]",
		Short:  "Claude Code's -p: one agent, driven by a script or a Claude Agent SDK program",
		Hidden: true, // reached as flower -p; see README "Coming from Claude Code"
		Args:   cobra.MaximumNArgs(1),
		// The SDK passes flags of newer Claude Codes: they must not fail
		// the run (--debug notes them).
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.debug {
				known := func(name string) bool {
					return cmd.Flags().Lookup(name) != nil || newRoot().PersistentFlags().Lookup(name) != nil
				}
				headless.NoteIgnored(cmd.ErrOrStderr(), os.Args[1:], known)
			}
			return runPrint(cmd.Context(), g, f, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&f.print, "print", "p", false, "print the response and exit (Claude Code's headless mode)")
	fl.StringVar(&f.hf.Output, "output-format", "text", "text, json (one object) or stream-json (Claude Code's lines); flower-events: flower's own events")
	fl.StringVar(&f.hf.Input, "input-format", "text", "text (the prompt) or stream-json (user messages and control requests, one per line)")
	fl.BoolVar(&f.verbose, "verbose", false, "with stream-json: every message (always on in flower)")
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the most recent session of this workspace")
	fl.StringVar(&f.resume, "resume", "", "continue this session (its id, or a unique prefix of it)")
	fl.StringVar(&f.sessionID, "session-id", "", "continue this session when it exists (flower chooses new sessions' ids)")
	fl.BoolVar(&f.fork, "fork-session", false, "with --resume: branch into a new session")
	fl.StringSliceVar(&f.cfg.Allowed, "allowedTools", nil, `permission rules that run without asking ("Bash(git:*) Edit")`)
	fl.StringSliceVar(&f.cfg.Allowed, "allowed-tools", nil, "the same as --allowedTools")
	fl.StringSliceVar(&f.cfg.Disallowed, "disallowedTools", nil, "permission rules that never run")
	fl.StringSliceVar(&f.cfg.Disallowed, "disallowed-tools", nil, "the same as --disallowedTools")
	fl.StringVar(&f.hf.Mode, "permission-mode", "default", "default, acceptEdits, plan (no effect runs) or bypassPermissions")
	fl.BoolVar(&f.hf.SkipPermissions, "dangerously-skip-permissions", false, "the same as --permission-mode bypassPermissions")
	fl.StringVar(&f.hf.PromptTool, "permission-prompt-tool", "", `"stdio": ask the host (can_use_tool) before an effect no allow rule names`)
	fl.StringVar(&f.system, "system-prompt", "", "replace flower's system prompt")
	fl.StringVar(&f.appendSys, "append-system-prompt", "", "add to the system prompt")
	fl.StringVar(&f.schema, "json-schema", "", "a JSON Schema the final answer's JSON must match (result.structured_output)")
	fl.StringArrayVar(&f.cfg.MCPConfigs, "mcp-config", nil, `MCP servers: a file or JSON text {"mcpServers": {...}}`)
	fl.BoolVar(&f.cfg.Strict, "strict-mcp-config", false, "only the --mcp-config servers")
	fl.IntVar(&f.maxTurns, "max-turns", 100, "stop after this many model responses per message")
	fl.Float64Var(&f.budget, "max-budget-usd", 0, "stop once this many USD are spent (0: no limit)")
	fl.BoolVar(&f.debug, "debug", false, "note the Claude Code flags flower ignores")
	fl.Lookup("debug").NoOptDefVal = "true"
	return cmd
}

func runPrint(ctx context.Context, g *globals, f *printFlags, args []string, stdin io.Reader, out, errw io.Writer) error {
	if f.hf.Output == "flower-events" {
		of := &onceFlags{resume: f.resume, format: script.StreamJSON, maxTurns: f.maxTurns, budget: f.budget}
		prompt, err := script.Prompt(args, "", stdin)
		if err != nil {
			return fail(err)
		}
		return runOnce(ctx, g, of, prompt, out)
	}
	mode, err := f.hf.Check()
	if err != nil {
		return usageErr("%v", err)
	}
	stream := f.hf.Input == "stream-json"
	var prompt string
	if !stream {
		if prompt, err = script.Prompt(args, "", stdin); err != nil {
			return fail(err)
		}
		if prompt == "" && f.resume == "" && !f.cont {
			return usageErr(`-p needs a prompt, e.g. flower -p "create hello.txt"`)
		}
	}
	return printSession(ctx, g, f, mode, prompt, stdin, out, errw)
}

// printSession opens the workspace and runs the session.
func printSession(ctx context.Context, g *globals, f *printFlags, mode permission.Mode, prompt string, stdin io.Reader, out, errw io.Writer) error {
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	cfg, err := flower.LoadConfig(ws)
	if err != nil {
		return fail(err)
	}
	skipped, err := f.cfg.Apply(&cfg)
	if err != nil {
		return usageErr("%v", err)
	}
	if f.debug {
		headless.Notes(errw, skipped)
	}
	if err := checkLimits(g.model, f.maxTurns, f.budget); err != nil {
		return err
	}
	h, err := g.openHost(ctx, cfg, errw)
	if err != nil {
		return err
	}
	defer h.Close()
	sess, err := headless.Start(ctx, h, headless.HostOptions{Out: out, Err: errw, Format: f.hf.Output, Mode: mode,
		PromptTool: f.hf.PromptTool == "stdio", Debug: f.debug, Resume: f.resume, SessionID: f.sessionID, Continue: f.cont,
		Fork: f.fork, System: f.system, Append: f.appendSys, Schema: f.schema, MaxTurns: f.maxTurns, Budget: f.budget,
		Version: version()})
	if err != nil {
		return fail(err)
	}
	ctx, stop := interruptible(ctx, h.Runtime(), errw, nil)
	defer stop()
	if f.hf.Input != "stream-json" {
		return onceExit(ctx, sess.Once(ctx, prompt))
	}
	last, err := sess.Serve(ctx, stdin)
	if err != nil {
		return usageErr("%v", err)
	}
	if last != nil && !last.OK && !last.Interrupted {
		return &exitError{code: exitFailed, err: fmt.Errorf("the last message failed (continue with flower -p --resume %s)", last.Session)}
	}
	return nil
}
