package flower

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrBadWorkspace is CheckWorkspace's error.
var ErrBadWorkspace = errors.New("not a workspace")

// CheckWorkspace refuses a directory no run may have as its workspace
// (issue 20 item 6): the filesystem root, whose agent would write
// everywhere; flower's state directory or a directory in it, where the
// agent would write the state it must not touch; and a path that is not
// an existing directory, which is never created behind the person's back.
// ws must be absolute.
func CheckWorkspace(ws string) error {
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return fmt.Errorf("workspace %s: %w: no such directory (create it first, or give an existing one)", ws, ErrBadWorkspace)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return fmt.Errorf("workspace %s: %w: not a directory", ws, ErrBadWorkspace)
	}
	if real == filepath.Dir(real) {
		return fmt.Errorf("workspace %s: %w: the filesystem root; give the project's directory", ws, ErrBadWorkspace)
	}
	if home, err := StateHome(); err == nil {
		state := filepath.Join(home, "flower")
		if r, err := filepath.EvalSymlinks(state); err == nil {
			state = r
		}
		if real == state || strings.HasPrefix(real, state+string(filepath.Separator)) {
			return fmt.Errorf("workspace %s: %w: it is in flower's state directory %s, which no agent may write", ws, ErrBadWorkspace, state)
		}
	}
	return nil
}
