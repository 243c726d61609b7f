package config

import (
	"os"
	"path/filepath"
)

// UserFileName is the user-level config's name, in UserDir.
const UserFileName = "config.yaml"

// UserDir is where flower keeps the person's own settings and
// instructions: $XDG_CONFIG_HOME/flower, else ~/.config/flower (R10.2).
// "" when neither is known.
func UserDir() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "flower")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "flower")
}

// UserFile is the user-level config.yaml; "" when UserDir is unknown.
func UserFile() string {
	dir := UserDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, UserFileName)
}

// UserProtected are the person's own configuration files outside the
// workspace that flower reads at every start: the user config (UserDir:
// config.yaml, AGENTS.md) and Claude Code's user settings, agents,
// commands and CLAUDE.md (~/.claude). They are protected as the
// workspace's are (sandbox.Protected): none of them is under the
// confirmation a changed flower.yaml needs, so a tool must never change
// them, also where the workspace is the home directory or a writable
// path contains them (issue 20).
func UserProtected() []string {
	var out []string
	if dir := UserDir(); dir != "" {
		out = append(out, dir)
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		out = append(out, filepath.Join(home, ClaudeDir))
	}
	return out
}
