package flower

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flower-run/flower/project"
)

// The run dir holds one workspace's durable state. It lives outside the
// workspace by default (issue 10): an agent that runs `git clean -fdx` or
// `rm -rf .` in its workspace must not take flower's state with it. Like
// Claude Code's ~/.claude/projects, each workspace gets its own directory
// under the user's state directory. Its files are named here, once.
const (
	// StoreFile is the SQLite store in the run dir.
	StoreFile = "sessions.db"
	// oldStateFile is the run state an older flower kept in JSON.
	oldStateFile = "state.json"
	// oldViewsDir held an older flower's snapshots of sessions' views.
	oldViewsDir = "views"
)

// StateHome is $XDG_STATE_HOME, or ~/.local/state when it is unset or not
// absolute (the XDG spec says to ignore a relative one).
func StateHome() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory: set XDG_STATE_HOME or HOME, or pass -r RUN_DIR: %w", err)
	}
	return filepath.Join(home, ".local", "state"), nil
}

// DefaultRunDir is the run dir of workspace ws (an absolute path):
// flower/projects/<slug> under the state directory. The slug is readable
// (the path with its separators turned into dashes) and unique (a hash of
// the exact path: "/a-b" and "/a/b" get different directories). A project
// that moved keeps the run dir of the path it had (FindProject): its id
// resolves to it through the project index. The workspace's lock lives
// there whatever run dir a process uses.
func DefaultRunDir(ws string) (string, error) {
	home, err := StateHome()
	if err != nil {
		return "", err
	}
	if dir, ok := project.IndexIn(home).RunDir(ws); ok {
		return dir, nil
	}
	return pathRunDir(home, ws), nil
}

// pathRunDir is the run dir the path ws names under the state directory
// home, whatever its project's id says.
func pathRunDir(home, ws string) string {
	return filepath.Join(home, "flower", "projects", RunDirName(ws))
}

// RunDirName is the name of workspace ws's run dir in a directory of many
// (the state home's, a worker's): the path made readable, and a hash of
// it, so that paths the readable part confuses (/srv/my_app, /srv/my-app)
// never share one.
func RunDirName(ws string) string {
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

// HasState reports whether runDir holds a store (or the state an older
// flower kept in JSON): whether there may be work to continue there.
func HasState(runDir string) bool {
	for _, name := range []string{StoreFile, oldStateFile} {
		if _, err := os.Stat(filepath.Join(runDir, name)); err == nil {
			return true
		}
	}
	return false
}

// SameDir reports whether a and b name the same directory.
func SameDir(a, b string) bool { return project.SameDir(a, b) }

// Tilde shows a path with ~ for the home directory.
func Tilde(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "/" && strings.HasPrefix(p, home+"/") {
		return "~" + strings.TrimPrefix(p, home)
	}
	return p
}

// OldRunDir is the default run dir of flower before issue 10: ./runs,
// relative to the current directory.
const OldRunDir = "runs"

// RunDirEnv names the run dir when a caller chooses none.
const RunDirEnv = "FLOWER_RUN_DIR"

// ChooseRunDir is the run dir of workspace ws (absolute) when the caller
// names none: $FLOWER_RUN_DIR (relative to dir, "" being the current
// directory), else RunDirFor(ws, dir). It creates nothing.
func ChooseRunDir(ws, dir string) (runDir string, old bool, err error) {
	if d := os.Getenv(RunDirEnv); d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		return d, false, nil
	}
	return RunDirFor(ws, dir)
}

// RunDirFor is the run dir of workspace ws (absolute) when none is
// chosen: DefaultRunDir, unless only the runs directory in dir (the
// current directory, "", for the CLI) that an older flower wrote for ws
// holds its state, which is kept in use (old is then true) so an upgrade
// loses no thread. It creates nothing.
func RunDirFor(ws, dir string) (runDir string, old bool, err error) {
	def, err := DefaultRunDir(ws)
	if err != nil {
		return "", false, err
	}
	if prev := filepath.Join(dir, OldRunDir); !HasState(def) && oldRunDirOf(prev, ws) {
		return prev, true, nil
	}
	return def, false, nil
}

// oldRunDirOf reports whether dir holds a store with a lineage of
// workspace ws, as an older flower's default run dir did.
func oldRunDirOf(dir, ws string) bool {
	if !HasState(dir) {
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
		if SameDir(l.Workspace, ws) {
			return true
		}
	}
	return false
}
