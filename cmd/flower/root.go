package main

import (
	"github.com/spf13/cobra"
)

// globals are the flags every subcommand shares.
type globals struct {
	runDir    string
	model     string
	workspace string
}

func newRoot() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "flower",
		Short: "Long-running LLM agents that survive crashes, lost networks and full context windows",
		Long: `flower runs LLM agents durably: every model response and tool result is on disk
before the work goes on, so a killed process continues where it stopped.

  flower once "create hello.txt containing hello"    one agent, streamed
  flower once --resume SESSION "now add a line"      continue that session
  flower once --model demo "anything"                offline, no API key
  flower show SESSION                                print a transcript

Providers: ANTHROPIC_API_KEY (default, ANTHROPIC_BASE_URL honoured), or
OPENAI_API_KEY / OPENAI_BASE_URL with an OpenAI model name or "openai/NAME"
for OpenAI-compatible servers (ollama, vLLM, llama.cpp).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return usageErr("unknown command %q: the workflow form (flower TASK) is not in this build yet; run one agent with flower once %q", args[0], args[0])
		},
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&g.runDir, "run-dir", "r", "runs", "where durable state lives (relative to the current directory)")
	pf.StringVar(&g.model, "model", "", `model name, or "demo" for the offline scripted model (default $FLOWER_MODEL or `+defaultModel+`)`)
	pf.StringVar(&g.workspace, "workspace", ".", "the directory the agent works in")
	root.AddCommand(newOnce(g), newShow(g))
	return root
}
