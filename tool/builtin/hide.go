package builtin

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/flower-run/flower/tool"
)

// hides reports whether Grep and Glob leave the file at p out (Env.Hidden).
func (e Env) hides(p string) bool {
	return e.Hidden != nil && e.Hidden(p)
}

// expandHome reads a path given as ~/x or $HOME/x as in the home
// directory, as a shell would and as the permission rules do: otherwise
// Read ~/.ssh/id_rsa would name a file ~ in the workspace, and a
// Read(~/.ssh/**) rule would never see it (issue 20 item 5).
func expandHome(p string) string {
	var rest string
	switch {
	case p == "~" || p == "$HOME" || p == "${HOME}":
	case strings.HasPrefix(p, "~/"):
		rest = p[2:]
	case strings.HasPrefix(p, "$HOME/"):
		rest = p[len("$HOME/"):]
	case strings.HasPrefix(p, "${HOME}/"):
		rest = p[len("${HOME}/"):]
	default:
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	return filepath.Join(home, rest)
}

// environ is the environment of a Bash process (Env.Environ).
func (e Env) environ() []string {
	if e.Environ != nil {
		return e.Environ
	}
	return tool.EnvPolicy{}.Environ(os.Environ())
}
