package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/term"
)

// flower doctor: the state's health, one line a check (flower.Doctor). A
// command of its own rather than status --check: status is the quick look
// a person takes often, and doctor reads the whole store (quick_check).
func newDoctor(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check this workspace's state: store, damage, leftover temp files, project id (reads only)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.Context(), g, cmd.OutOrStdout())
		},
	}
}

// runDoctor prints each finding as "ok|!! check: what (fix)" and exits 1
// when any is not fine.
func runDoctor(ctx context.Context, g *globals, out io.Writer) error {
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	u, err := g.storeURL()
	if err != nil {
		return err
	}
	bad := 0
	for _, f := range flower.Doctor(ctx, ws, g.runDir, u) {
		mark, line := "ok", f.Text
		if !f.OK {
			mark, bad = "!!", bad+1
		}
		if f.Fix != "" {
			line += " (" + f.Fix + ")"
		}
		fmt.Fprintf(out, "%s %-11s %s\n", mark, f.Check, term.Clean(line))
	}
	if bad > 0 {
		return &exitError{code: exitFailed, err: errors.New("")}
	}
	return nil
}
