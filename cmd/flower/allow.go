package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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
			out := cmd.OutOrStdout()
			names, diff, err := flower.ConfigChanges(ws)
			if err != nil {
				return fail(err)
			}
			if len(names) == 0 {
				fmt.Fprintf(out, "flower: the config of %s is as approved; nothing to do\n", ws)
				return nil
			}
			if !term.Interactive(os.Stdin, out) {
				return usageErr("flower allow needs a person at a terminal (it shows the diff of %s and asks): run it yourself", strings.Join(names, ", "))
			}
			ok, err := askApproval(os.Stdin, out)(diff)
			if err != nil || !ok {
				return usageErr("%s: not approved (%v)", strings.Join(names, ", "), orNo(err))
			}
			if err := flower.ApproveConfig(ws); err != nil {
				return fail(err)
			}
			fmt.Fprintf(out, "flower: approved %s for %s\n", strings.Join(names, ", "), ws)
			return nil
		},
	}
}

func orNo(err error) string {
	if err != nil {
		return err.Error()
	}
	return "the answer was not yes"
}

// askApproval shows the diff and reads y or n from the terminal
// (term.ReadLine: nothing typed after the answer is taken from the run).
func askApproval(in io.Reader, out io.Writer) flower.Confirmer {
	return func(diff string) (bool, error) {
		fmt.Fprintf(out, "flower: the workspace config changed since it was last approved (the agent can write these files):\n%s", diff)
		return yesNo(in, out, "Apply these changes?"), nil
	}
}

// yesNo asks question at the terminal and reads y or n (term.ReadLine:
// nothing typed after the answer is taken from the run); no line (the
// input ended) is no.
func yesNo(in io.Reader, out io.Writer, question string) bool {
	fmt.Fprint(out, question+" [y/N] ")
	line, _ := term.ReadLine(in)
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
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
	return fail(flower.ConfirmConfig(ws, askApproval(stdin, out)))
}
