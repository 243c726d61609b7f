package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower"
)

// globals are the flags every subcommand shares.
type globals struct {
	runDir    string
	store     string // --store: a PostgreSQL URL (storeflag.go)
	model     string
	workspace string
	noTrim    bool
	idle      time.Duration // --idle-timeout (contain.go)
	secrets   []string      // more values to scrub (the serve token)
}

func newRoot() *cobra.Command {
	g := &globals{}
	f := &wakeFlags{}
	root := &cobra.Command{
		Use:   "flower [TASK]",
		Short: "Long-running LLM agents that survive crashes, lost networks and full context windows",
		Long: `flower does a task in this directory: it clarifies it with you, sets checkable
goals, does the work, and has a fresh-eyed judge verify it. Run flower again
after anything (Ctrl-C, a closed terminal, kill -9, a reboot) and the same
work continues: same conversations, no model call paid twice.

  flower "write a markdown-to-html script"   start (clarify, goals, work, judge)
  flower                                     continue the work in this directory
                                             (on a terminal it asks first: Enter
                                             continues, a line adds, /new restarts)
  flower "also support code highlighting"    continue, and the judge checks this too
  flower --new "another thing"               archive this thread, start another
  flower status                              what a wake would continue
  flower ps [--all]                          the runs in flight (and finished ones)
  flower serve "a task"                      the same, steered from a Web page
  flower once "create hello.txt"             one agent, no workflow
  flower --model demo "anything"             offline, no API key

While it runs, type a line to answer a question (a number picks an option)
or to send a note to the agent's inbox; a line starting with ? asks a
read-only side agent about the work ("? how far along are you?") without
disturbing it. Ctrl-C interrupts: type a note and press Enter to continue
with it at the next message boundary, or Enter alone to stop; a second
Ctrl-C exits at once. Either way, flower continues it. flower serve does the same
from a Web page.

Providers: ANTHROPIC_API_KEY (default, ANTHROPIC_BASE_URL honoured), or
OPENAI_API_KEY / OPENAI_BASE_URL with an OpenAI model name or "openai/NAME"
for OpenAI-compatible servers (ollama, vLLM, llama.cpp).`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.MaximumNArgs(1),
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := chooseRunDir(cmd, g, cmd.ErrOrStderr()); err != nil {
				return err
			}
			return configDefaults(cmd, g)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			phrase := strings.TrimSpace(strings.Join(args, " "))
			if err := notACommand(cmd, phrase); err != nil {
				return err
			}
			phrase, err := slashPrompt(g, phrase)
			if err != nil {
				return err
			}
			if f.reset {
				return reset(cmd.Context(), g, f.yes, cmd.InOrStdin(), cmd.OutOrStdout())
			}
			return wakeTerminal(cmd.Context(), g, f, phrase, cmd.OutOrStdout(), cmd.InOrStdin())
		},
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&g.runDir, "run-dir", "r", "", "where durable state lives (default $"+runDirEnv+", else $XDG_STATE_HOME/flower/projects/<workspace>)")
	pf.StringVar(&g.model, "model", "", `model name, or "demo" for the offline scripted model (default $FLOWER_MODEL or `+flower.DefaultModel+`)`)
	pf.StringVar(&g.workspace, "workspace", ".", "the directory the agent works in")
	containFlags(pf, g)
	addStoreFlag(pf, g)
	pf.BoolVar(&g.noTrim, "no-trim", false, "keep old large tool results whole in what the model sees (default: trim them to a pointer to a file)")
	fl := root.Flags()
	fl.BoolVar(&f.fresh, "new", false, "archive the current thread (lineage, brief, goals) and start TASK afresh")
	fl.Float64Var(&f.timeout, "timeout", 1800, "seconds a question waits for you; 0: unattended (never wait); -1: forever")
	fl.IntVar(&f.maxAsks, "max-asks", -1, "questions the agent may ask; -1: unlimited; 0: never")
	fl.IntVar(&f.rounds, "rounds", 3, "work rounds after a failed verdict (0: judge once, no rework; reset on every wake)")
	fl.BoolVar(&f.noRestore, "no-restore", false, "start a new run instead of finishing a cut one (the cut run stays in flight: flower ps, flower --run ID)")
	fl.StringVar(&f.runID, "run", "", "finish this in-flight run (flower ps lists them) instead of the newest")
	fl.IntVar(&f.maxTurns, "max-turns", 100, "model responses per step")
	fl.Float64Var(&f.budget, "budget", 0, "USD per step (0: no limit)")
	fl.StringVarP(&f.taskFile, "file", "f", "", "read TASK from FILE (for long tasks: an argument is limited to 128 KiB)")
	fl.BoolVar(&f.recheck, "recheck", false, "have a fresh judge check the work again, and nothing else (no work, no rework)")
	fl.BoolVar(&f.reset, "reset", false, "abandon the runs in flight (after confirmation) and move an incompatible store aside")
	fl.BoolVarP(&f.yes, "yes", "y", false, "with --reset: do not ask for confirmation")
	root.SetFlagErrorFunc(flagTypo)
	root.AddCommand(newOnce(g), newShow(g), newStatus(g), newPs(g), newDiscard(g), newServe(g, f, fl))
	root.AddCommand(newSessions(g), newVersion())
	root.AddCommand(newSubmit(g), newWorker(g)) // worker.go (issue 14)
	root.AddCommand(newMCP(g))                  // mcp.go (issue 13)
	root.AddCommand(newAllow(g))                // allow.go (issue 20)
	root.AddCommand(newDoctor(g))               // doctor.go (issue 22)
	root.AddCommand(newPrint(g))                // print.go: flower -p (issue 21)
	return root
}
