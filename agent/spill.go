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
		o.Trim = &view.Trim{Spill: s.spill}
	}
	return o
}

// spill writes a tool result's full text to the workbench once and returns
// its path relative to the workspace. The file is derived data (the store
// holds the text), so it is written without an fsync: a first wake after a
// crash that spills hundreds of results costs no fsync for them. A file a
// machine crash left missing, empty or torn is written again here. A
// partial op (store.Heads) is made whole, by whole, only when its file
// must be written or checked byte for byte.
func (r *Runtime) spill(op *store.Op, whole func(*store.Op) error) (string, error) {
	rel := filepath.Join(spillDir, safeName(op.ID)+".txt")
	abs := filepath.Join(r.workspace, rel)
	if r.spilledWhole(abs, op, whole) {
		return rel, nil
	}
	if op.Partial() {
		if err := whole(op); err != nil {
			return "", err
		}
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

// spilledWhole reports whether abs holds op's content. A file this process
// wrote or checked is trusted while it is there with its size, and so is
// one listed as durable by an earlier process (spillseal.go); any other is
// compared byte for byte once, since an unsynced file torn by a machine
// crash can have the right size and the wrong bytes (zeros). Whether a
// file is there comes from the directory's listing (listSpills), read once
// per view built, instead of a Stat per trimmed result, which was a system
// call per old large result on every wake (issue 12); the size a known or
// listed file has is the one this process or the sealing one saw.
func (r *Runtime) spilledWhole(abs string, op *store.Op, whole func(*store.Op) error) bool {
	name, size := filepath.Base(abs), int64(op.Len())
	r.spillMu.Lock()
	listed, there := r.present != nil, r.present[name] // listed: the directory was read
	known, ok := r.spilledSize[abs]
	r.spillMu.Unlock()
	if listed && !there {
		return false
	}
	if ok && known == size {
		if !listed {
			return statSize(abs) == size
		}
		return true
	}
	if s, ok := r.sealedSizes()[name]; ok && s == size && (listed || statSize(abs) == size) {
		r.markSpilled(abs, size)
		return true
	}
	if statSize(abs) != size || op.Partial() && whole(op) != nil {
		return false
	}
	data, err := os.ReadFile(abs)
	if err != nil || string(data) != op.Content {
		return false
	}
	r.markSpilled(abs, size)
	return true
}

// statSize is the size of the file at path, -1 if there is none.
func statSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// listSpills reads which spill files are there, for the view about to be
// built (spilledWhole). Without a listing, spilledWhole stats each file.
func (r *Runtime) listSpills() {
	f, err := os.Open(filepath.Join(r.workspace, spillDir))
	var names []string
	if err == nil {
		names, err = f.Readdirnames(-1)
		f.Close()
	}
	present := make(map[string]bool, len(names))
	for _, n := range names {
		present[n] = true
	}
	r.spillMu.Lock()
	defer r.spillMu.Unlock()
	switch {
	case err == nil || os.IsNotExist(err):
		r.present = present
	default:
		r.present = nil
	}
}

func (r *Runtime) markSpilled(abs string, size int64) {
	r.spillMu.Lock()
	defer r.spillMu.Unlock()
	if r.spilledSize == nil {
		r.spilledSize = map[string]int64{}
	}
	r.spilledSize[abs] = size
	if r.present != nil {
		r.present[filepath.Base(abs)] = true
	}
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
