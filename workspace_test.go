package flower_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower"
)

// TestCheckWorkspace (issue 20 item 6): /, flower's state directory and
// what is in it, and a missing directory are refused with one line; an
// ordinary directory is not.
func TestCheckWorkspace(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	inState := filepath.Join(state, "flower", "projects", "x")
	if err := os.MkdirAll(inState, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for ws, want := range map[string]string{
		"/":                            "the filesystem root",
		filepath.Join(state, "flower"): "flower's state directory",
		inState:                        "flower's state directory",
		filepath.Join(state, "none"):   "no such directory",
		file:                           "not a directory",
	} {
		err := flower.CheckWorkspace(ws)
		if !errors.Is(err, flower.ErrBadWorkspace) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("CheckWorkspace(%s) = %v, want one line with %q", ws, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "none")); err == nil {
		t.Error("a missing workspace was created")
	}
	if err := flower.CheckWorkspace(t.TempDir()); err != nil {
		t.Errorf("an ordinary directory: %v", err)
	}
}
