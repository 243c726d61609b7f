package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
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
	if _, err := os.Stat(filepath.Join(runDir, "state.json")); err == nil {
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
		Args:  cobra.ExactArgs(1),
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

// reset abandons the runs in flight after confirmation (R5.6). A store of
// another schema version is moved aside, so a new one can be created;
// nothing is deleted.
//
// It holds the runs' lock throughout: a flower that started between a
// check and the discards could otherwise pick a run in flight and commit
// it back in flight after the reset discarded it.
func reset(ctx context.Context, g *globals, yes bool, in io.Reader, out io.Writer) error {
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	u, err := g.storeURL()
	if err != nil {
		return err
	}
	if _, err := os.Stat(g.runDir); err == nil || g.hasStore() {
		unlock, err := flower.LockRuns(ctx, g.runDir, u, ws)
		if errors.Is(err, store.ErrBusy) {
			return &exitError{code: exitFailed, err: busyForReset(ctx, g, u, err)}
		}
		if err != nil {
			return fail(err)
		}
		defer unlock()
	}
	if !yes {
		fmt.Fprintf(out, "This abandons the runs in flight in %s (sessions, lineage and manifest stay) and moves an incompatible sessions.db aside. Continue? [y/N] ", g.runDir)
		line, _ := bufio.NewReader(in).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return &exitError{code: exitFailed, err: fmt.Errorf("reset cancelled")}
		}
	}
	// The store as it is now is the truth from here: a damaged one is
	// accepted (issue 22 item 2).
	_ = os.Remove(filepath.Join(g.runDir, workflow.MarkFile))
	moved, err := flower.MoveIncompatibleStore(g.runDir, time.Now())
	if err != nil {
		return fail(err)
	}
	if moved != "" {
		fmt.Fprintf(out, "moved the incompatible store to %s\n", moved)
	}
	if g.hasStore() {
		ids, err := flower.DiscardInFlight(ctx, g.runDir, u, ws, out)
		if err != nil {
			return fail(err)
		}
		for _, id := range ids {
			fmt.Fprintf(out, "discarded %s\n", id)
		}
	}
	fmt.Fprintln(out, "in-flight state cleared")
	return nil
}

// busyForReset words a refused --reset: the run dir's holder, or the
// lease's refusal as it is (it names the holder).
func busyForReset(ctx context.Context, g *globals, url string, err error) error {
	if url != "" {
		return fmt.Errorf("%w: stop it before --reset", err)
	}
	h, _ := sqlite.Dirs{}.Holder(ctx, g.runDir)
	return fmt.Errorf("pid %d is driving %s: stop it before --reset", h.PID, g.runDir)
}
