package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/term"
)

// The run dir lives outside the workspace by default (issue 10): an agent
// that runs `git clean -fdx` or `rm -rf .` in its workspace must not take
// flower's durable state with it. Like Claude Code's ~/.claude/projects,
// each workspace gets its own directory under the user's state directory.

// runDirEnv chooses the run dir, as -r does.
const runDirEnv = flower.RunDirEnv

// chooseRunDir sets g.runDir: -r, then FLOWER_RUN_DIR, then the default
// under the state directory. A ./runs written by an older flower for
// this workspace is kept in use, with a notice, so an upgrade loses no
// thread. It creates nothing.
func chooseRunDir(cmd *cobra.Command, g *globals, notice io.Writer) error {
	if err := checkIdle(g); err != nil {
		return err
	}
	if cmd.Flags().Changed("run-dir") {
		if g.runDir == "" {
			return usageErr("-r/--run-dir: give a directory")
		}
		return nil
	}
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	dir, old, err := flower.ChooseRunDir(ws, "")
	if err != nil {
		return usageErr("%v", err)
	}
	g.runDir = dir
	if old {
		def, _ := flower.DefaultRunDir(ws)
		fmt.Fprintf(notice, "flower: note: using ./%s, where an older flower kept this workspace's state (flower now keeps it in %s; move it there to keep the agent away from it)\n",
			dir, tilde(def))
	}
	return nil
}

// findProject binds the workspace's project id before a start reads its
// run dir (flower.FindProject): a project that moved here takes over the
// state it left, asked at a terminal; a copy gets state of its own.
func findProject(g *globals, stdin io.Reader, out io.Writer) error {
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	var ask flower.Adopter
	if stdin != nil && term.Interactive(stdin, out) {
		ask = func(from string) (bool, error) {
			return term.Confirm(stdin, out, fmt.Sprintf("flower: this project was at %s and left its runs and sessions there. Take them over here? [y/N] ", tilde(from))), nil
		}
	}
	u, err := g.storeURL()
	if err != nil {
		return err
	}
	g.runDir, err = flower.FindProject(ws, g.runDir, u, ask, out)
	return fail(err)
}

// stateDir shows where a run dir is: absolute, with ~ for the home.
func stateDir(runDir string) string {
	if abs, err := filepath.Abs(runDir); err == nil {
		runDir = abs
	}
	return tilde(runDir)
}
