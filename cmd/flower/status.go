package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/term"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow"
	"github.com/flower-run/flower/workflow/starter"
)

func newStatus(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show what a wake would continue in this directory (reads only)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStatus(g, cmd.OutOrStdout())
		},
	}
}

// runStatus prints the wake state (R3.6); it writes nothing.
func runStatus(g *globals, out io.Writer) error {
	ws, s, err := readStore(g)
	if err != nil {
		return err
	}
	var inFlight []workflow.RunInfo
	if s != nil {
		defer s.Close()
		if inFlight, err = flower.Runs(context.Background(), s, g.runDir, ws, false); err != nil {
			return &exitError{code: exitFailed, err: err}
		}
	}
	st := starter.WakeState(ws, s)
	if !st.Waking && len(st.Steps) == 0 && len(inFlight) == 0 {
		fmt.Fprintf(out, "nothing to continue in %s: start with flower \"describe the task\"%s\n", tilde(ws), v1Hint(g.runDir))
		fmt.Fprintf(out, "state      %s\n", stateDir(g.runDir))
		printFilesRead(out, ws)
		return nil
	}
	fmt.Fprintf(out, "workspace  %s\nstate      %s\nwakes      %d\n", tilde(ws), stateDir(g.runDir), st.Woke)
	printFilesRead(out, ws)
	if hint := v1Hint(g.runDir); hint != "" {
		fmt.Fprintf(out, "note       %s\n", strings.Trim(hint, " ()"))
	}
	for _, r := range inFlight {
		how := "cut: a wake finishes it"
		if r.Live {
			how = fmt.Sprintf("driven by pid %d now", r.Owner.PID)
		}
		fmt.Fprintf(out, "run        %s in flight at step %s, %s\n", r.ID, dash(r.Row), how)
	}
	if s != nil {
		lastRun(s, ws, out)
	}
	if st.Goal != "" {
		fmt.Fprintf(out, "goal       %s\n", term.Clean(st.Goal))
	}
	for _, a := range st.Added { // what later wakes added to the task (issue 23)
		fmt.Fprintf(out, "added      %s\n", term.Clean(a))
	}
	fmt.Fprintf(out, "brief      %s\ngoals      %d checks\n", map[bool]string{true: "confirmed", false: "not yet confirmed"}[st.Waking], st.Checks)
	names := make([]string, 0, len(st.Steps))
	for n := range st.Steps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(out, "step       %-8s session %s\n", n, st.Steps[n])
	}
	return nil
}

// lastRun prints what the runs cost and how the newest finished run
// ended, with its verdict (issue 11).
func lastRun(s store.Store, ws string, out io.Writer) {
	sp, err := flower.Spending(context.Background(), s, ws)
	if err != nil {
		return
	}
	if sp.Runs > 0 {
		fmt.Fprintf(out, "cost       $%.4f in all (%d runs)\n", sp.Total, sp.Runs)
	}
	if r := sp.Last; r != nil {
		fmt.Fprintf(out, "last run   %s %s · %s\n", r.ID, status(*r), model.USD(sp.LastCost))
		if r.Findings != "" {
			fmt.Fprintf(out, "verdict    %s\n", term.Clean(firstLineOf(r.Findings)))
		}
	}
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
