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
	o := view.Options{KeepDenials: 1, Old: s.old, Settled: true}
	if s.rt.trim {
		o.Trim = &view.Trim{Spill: s.rt.spill}
	}
	return o
}

// spill writes a tool result's full text to the workbench once and returns
// its path relative to the workspace. The file is derived data (the store
// holds the text), so it is written without an fsync: a first wake after a
// crash that spills hundreds of results costs no fsync for them. A file a
// machine crash left missing, empty or torn is written again here.
func (r *Runtime) spill(op *store.Op) (string, error) {
	rel := filepath.Join(spillDir, safeName(op.ID)+".txt")
	abs := filepath.Join(r.workspace, rel)
	if r.spilledWhole(abs, op.Content) {
		return rel, nil
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return "", err
	}
	r.unseal(filepath.Base(abs))
	if err := atomicfile.WriteFileUnsynced(abs, []byte(op.Content), 0o644); err != nil {
		return "", err
	}
	r.markSpilled(abs, int64(len(op.Content)))
	return rel, nil
}

// spilledWhole reports whether abs holds content. A file this process
// wrote or checked is trusted while its size matches (one Stat per view),
// and so is one listed as durable by an earlier process (spillseal.go);
// any other is compared byte for byte once, since an unsynced file torn by
// a machine crash can have the right size and the wrong bytes (zeros).
func (r *Runtime) spilledWhole(abs, content string) bool {
	fi, err := os.Stat(abs)
	if err != nil || fi.Size() != int64(len(content)) {
		return false
	}
	r.spillMu.Lock()
	_, known := r.spilledSize[abs]
	r.spillMu.Unlock()
	if known {
		return true
	}
	if size, ok := r.sealedSizes()[filepath.Base(abs)]; ok && size == fi.Size() {
		r.markSpilled(abs, fi.Size())
		return true
	}
	data, err := os.ReadFile(abs)
	if err != nil || string(data) != content {
		return false
	}
	r.markSpilled(abs, fi.Size())
	return true
}

func (r *Runtime) markSpilled(abs string, size int64) {
	r.spillMu.Lock()
	defer r.spillMu.Unlock()
	if r.spilledSize == nil {
		r.spilledSize = map[string]int64{}
	}
	r.spilledSize[abs] = size
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
