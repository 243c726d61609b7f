package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/term"
)

// flower allow, and the confirmation of a changed workspace config at a
// terminal start (issue 20 item 2; approve.go in package flower).
func newAllow(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "allow",
		Short: "Review and approve the workspace's changed config (flower.yaml, .mcp.json, .claude/settings*.json)",
		Long: `Show what changed in the workspace's flower.yaml, .mcp.json and
.claude/settings*.json since a person last approved them, and approve the
new content after a yes. A start refuses a changed config until then when
no one is at a terminal (flower once, workers, flower serve, --timeout 0);
at a terminal it shows the same diff and asks. It needs a terminal: the
agent cannot approve its own changes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := filepath.Abs(g.workspace)
			if err != nil {
				return usageErr("--workspace: %v", err)
			}
			return fail(flower.Allow(ws, os.Stdin, cmd.OutOrStdout()))
		},
	}
}

// confirmAtStart confirms a changed config before a wake at a terminal;
// elsewhere LoadConfig refuses it.
func confirmAtStart(g *globals, f *wakeFlags, stdin io.Reader, out io.Writer) error {
	if f.timeout == 0 || !term.Interactive(stdin, out) {
		return nil
	}
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	return fail(flower.ConfirmConfig(ws, flower.AskApproval(stdin, out)))
}
