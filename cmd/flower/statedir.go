package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
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

// stateHome is $XDG_STATE_HOME, or ~/.local/state when it is unset or not
// absolute (as the XDG spec says to ignore a relative one).
func stateHome() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory: set XDG_STATE_HOME or HOME, or pass -r RUN_DIR: %w", err)
	}
	return filepath.Join(home, ".local", "state"), nil
}

// projectDir is the directory of a workspace under the state directory:
// flower/projects/<slug>. The slug is readable (the path with its
// separators turned into dashes) and unique (a hash of the exact path:
// "/a-b" and "/a/b" get different directories).
func projectDir(ws string) (string, error) {
	home, err := stateHome()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "flower", "projects", slug(ws)), nil
}

func slug(ws string) string {
	sum := sha256.Sum256([]byte(ws))
	name := strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, ws), "-.")
	if len(name) > 80 {
		name = name[len(name)-80:] // the end of a path says the most
	}
	return name + "-" + hex.EncodeToString(sum[:4])
}

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
	def, err := projectDir(ws)
	if err != nil {
		return usageErr("%v", err)
	}
	g.runDir = def
	if hasRunDir(def) || !oldRunDirOf(oldRunDir, ws) {
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
	if !hasRunDir(dir) {
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
		if sameDir(l.Workspace, ws) {
			return true
		}
	}
	return false
}

func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// stateDir shows where a run dir is: absolute, with ~ for the home.
func stateDir(runDir string) string {
	if abs, err := filepath.Abs(runDir); err == nil {
		runDir = abs
	}
	return tilde(runDir)
}
