package agent

import (
	"os"
	"path/filepath"

	"github.com/flower-run/flower/internal/atomicfile"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/view"
)

// spillDir holds the full text of trimmed tool results, in the workbench.
const spillDir = ".flower/results"

// viewOptions are the pruning rules of this session's view (R4.5, R4.6).
func (s *session) viewOptions() view.Options {
	o := view.Options{KeepDenials: 1, Old: s.old}
	if s.rt.trim {
		o.Trim = &view.Trim{Spill: s.rt.spill}
	}
	return o
}

// spill writes a tool result's full text to the workbench once and returns
// its path relative to the workspace.
func (r *Runtime) spill(op *store.Op) (string, error) {
	rel := filepath.Join(spillDir, safeName(op.ID)+".txt")
	abs := filepath.Join(r.workspace, rel)
	if fi, err := os.Stat(abs); err == nil && fi.Size() == int64(len(op.Content)) {
		return rel, nil
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return "", err
	}
	return rel, atomicfile.WriteFile(abs, []byte(op.Content), 0o644)
}

// safeName keeps a tool_use id usable as a file name.
func safeName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}
