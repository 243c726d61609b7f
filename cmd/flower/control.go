package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/term"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow"
)

func newPs(g *globals) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "ps",
		Short: "List the runs in flight in this workspace and who drives them (reads only)",
		Long: `List the runs in flight in this workspace: a bare flower finishes the newest,
flower --run ID another, flower discard ID abandons one. --all lists finished
and discarded runs too. ps reads the store only: it never waits for, or
gets in the way of, a flower that drives a run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPs(cmd.Context(), g, all, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also list finished and discarded runs")
	return cmd
}

func runPs(ctx context.Context, g *globals, all bool, out io.Writer) error {
	ws, s, err := readStore(g)
	if err != nil || s == nil {
		if err == nil {
			fmt.Fprintf(out, "no runs in %s%s\n", g.runDir, v1Hint(g.runDir))
		}
		return err
	}
	defer s.Close()
	runs, err := flower.Runs(ctx, s, g.runDir, ws, all)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if len(runs) == 0 {
		fmt.Fprintf(out, "no runs %sin %s%s\n", map[bool]string{false: "in flight "}[all], g.runDir, v1Hint(g.runDir))
		return nil
	}
	for _, r := range runs {
		fmt.Fprintf(out, "%s  %-9s  step %-8s  done %s  driven by %s\n", r.ID, status(r.Run), dash(r.Row),
			dash(strings.Join(r.Done, ",")), driver(r))
	}
	return nil
}

// status is a run's status as ps shows it.
func status(r store.Run) string {
	if r.Status == store.RunFinished && r.Outcome != "" {
		return r.Outcome
	}
	return string(r.Status)
}

func driver(r workflow.RunInfo) string {
	switch {
	case r.Live:
		return fmt.Sprintf("pid %d on %s since %s%s", r.Owner.PID, r.Owner.Host, r.Owner.Since.Format("15:04:05"), heartbeat(r.Owner))
	case r.Status == store.RunInFlight:
		return "nobody (a wake will finish it)"
	}
	return "-"
}

// readStore opens the store for a read-only command; s is nil when there
// is none yet. Nothing is created.
func readStore(g *globals) (ws string, s store.Store, err error) {
	ws, err = filepath.Abs(g.workspace)
	if err != nil {
		return "", nil, usageErr("--workspace: %v", err)
	}
	u, err := g.storeURL()
	if err != nil {
		return "", nil, err
	}
	s, err = flower.ReadStore(context.Background(), g.runDir, u)
	return ws, s, fail(err)
}

// v1Hint tells that the run dir's run state is still in an older flower's
// files: the next wake imports it.
func v1Hint(runDir string) string {
	if flower.OlderState(runDir) {
		return " (its run state was written by an older flower: the next flower imports it)"
	}
	return ""
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newDiscard(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "discard RUN",
		Short: "Abandon an in-flight run: no wake finishes it (its sessions and rows stay)",
		Args:  needs("RUN id", "flower ps lists the runs in flight (a unique prefix of an id will do)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiscard(cmd.Context(), g, args[0], cmd.OutOrStdout())
		},
	}
}

// runDiscard abandons run id (flower.Discard).
func runDiscard(ctx context.Context, g *globals, id string, out io.Writer) error {
	ws, s, err := readStore(g)
	if err != nil {
		return err
	}
	if s == nil {
		return usageErr("no run %s: %s has no store%s", id, g.runDir, v1Hint(g.runDir))
	}
	defer s.Close()
	u, err := g.storeURL()
	if err != nil {
		return err
	}
	if err := flower.Discard(ctx, s, g.runDir, u, ws, id); err != nil {
		return fail(err)
	}
	fmt.Fprintf(out, "discarded %s\n", id)
	return nil
}

// reset abandons the runs in flight after confirmation (flower.Reset).
func reset(ctx context.Context, g *globals, yes bool, in io.Reader, out io.Writer) error {
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	u, err := g.storeURL()
	if err != nil {
		return err
	}
	confirm := func() bool {
		return term.Confirm(in, out, fmt.Sprintf("This abandons the runs in flight in %s (sessions, lineage and manifest stay) and moves an incompatible sessions.db aside. Continue? [y/N] ", g.runDir))
	}
	if yes {
		confirm = nil
	}
	r, err := flower.Reset(ctx, g.runDir, u, ws, confirm, out)
	if r.Moved != "" {
		fmt.Fprintf(out, "moved the incompatible store to %s\n", r.Moved)
	}
	for _, id := range r.Discarded {
		fmt.Fprintf(out, "discarded %s\n", id)
	}
	if err != nil { // a busy lease or a refusal exits 1
		return fail(err)
	}
	fmt.Fprintln(out, "in-flight state cleared")
	return nil
}
