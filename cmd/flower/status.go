package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/term"
	"github.com/flower-run/flower/model"
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
	if s != nil {
		defer s.Close()
	}
	st, err := flower.ReadStatus(context.Background(), s, g.runDir, ws)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if st.Nothing() {
		fmt.Fprintf(out, "nothing to continue in %s: start with flower \"describe the task\"%s\n", tilde(ws), v1Hint(g.runDir))
		fmt.Fprintf(out, "state      %s\n", stateDir(g.runDir))
		printFilesRead(out, st.Files)
		return nil
	}
	fmt.Fprintf(out, "workspace  %s\nstate      %s\nwakes      %d\n", tilde(ws), stateDir(g.runDir), st.State.Woke)
	printFilesRead(out, st.Files)
	if st.Older {
		fmt.Fprintf(out, "note       %s\n", strings.Trim(v1Hint(g.runDir), " ()"))
	}
	for _, r := range st.InFlight {
		how := "cut: a wake finishes it"
		if r.Live {
			how = fmt.Sprintf("driven by pid %d now", r.Owner.PID)
		}
		fmt.Fprintf(out, "run        %s in flight at step %s, %s\n", r.ID, dash(r.Row), how)
	}
	if sp := st.Spent; sp != nil && sp.Runs > 0 {
		fmt.Fprintf(out, "cost       $%.4f in all (%d runs)\n", sp.Total, sp.Runs)
	}
	if sp := st.Spent; sp != nil && sp.Last != nil {
		fmt.Fprintf(out, "last run   %s %s · %s\n", sp.Last.ID, status(*sp.Last), model.USD(sp.LastCost))
		if sp.Last.Findings != "" {
			line, _, _ := strings.Cut(strings.TrimSpace(sp.Last.Findings), "\n")
			fmt.Fprintf(out, "verdict    %s\n", term.Clean(line))
		}
	}
	if st.State.Goal != "" {
		fmt.Fprintf(out, "goal       %s\n", term.Clean(st.State.Goal))
	}
	for _, a := range st.State.Added { // what later wakes added to the task (issue 23)
		fmt.Fprintf(out, "added      %s\n", term.Clean(a))
	}
	fmt.Fprintf(out, "brief      %s\ngoals      %d checks\n", map[bool]string{true: "confirmed", false: "not yet confirmed"}[st.State.Waking], st.State.Checks)
	names := slices.Sorted(maps.Keys(st.State.Steps))
	for _, n := range names {
		fmt.Fprintf(out, "step       %-8s session %s\n", n, st.State.Steps[n])
	}
	return nil
}
