package sandbox

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/flower-run/flower/project"
)

// TestProtectedProjectID: the project's id is among the protected paths
// (its name is written in each package): an agent that rewrote it could
// make the next start take another project's state as this one's.
func TestProtectedProjectID(t *testing.T) {
	ws := "/ws"
	if p := Protected(ws, false); !slices.Contains(p, filepath.Join(ws, filepath.FromSlash(project.IDFile))) {
		t.Errorf("protected %v: want %s", p, project.IDFile)
	}
}
