package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower"
)

// The run dir lives outside the workspace by default (issue 10): an agent
// that runs `git clean -fdx` or `rm -rf .` in its workspace must not take
// flower's durable state with it. Like Claude Code's ~/.claude/projects,
// each workspace gets its own directory under the user's state directory.

// runDirEnv chooses the run dir, as -r does.
const runDirEnv = "FLOWER_RUN_DIR"

// oldRunDir is the default run dir of flower before issue 10: ./runs,
// relative to the current directory.
const oldRunDir = "runs"

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
	if d := os.Getenv(runDirEnv); d != "" {
		g.runDir = d
		return nil
	}
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	def, err := flower.DefaultRunDir(ws)
	if err != nil {
		return usageErr("%v", err)
	}
	g.runDir = def
	if flower.HasState(def) || !oldRunDirOf(oldRunDir, ws) {
		return nil
	}
	g.runDir = oldRunDir
	fmt.Fprintf(notice, "flower: note: using ./%s, where an older flower kept this workspace's state (flower now keeps it in %s; move it there to keep the agent away from it)\n",
		oldRunDir, tilde(def))
	return nil
}

// oldRunDirOf reports whether dir holds a store with a lineage of
// workspace ws, as an older flower's default run dir did.
func oldRunDirOf(dir, ws string) bool {
	if !flower.HasState(dir) {
		return false
	}
	for _, name := range []string{"lineage.json", "WORKSPACE"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		var l struct {
			Workspace string `json:"workspace"`
		}
		if json.Unmarshal(data, &l) != nil {
			l.Workspace = strings.TrimSpace(string(data))
		}
		if flower.SameDir(l.Workspace, ws) {
			return true
		}
	}
	return false
}

// stateDir shows where a run dir is: absolute, with ~ for the home.
func stateDir(runDir string) string {
	if abs, err := filepath.Abs(runDir); err == nil {
		runDir = abs
	}
	return tilde(runDir)
}
