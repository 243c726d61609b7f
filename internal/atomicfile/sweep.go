package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// tempName matches the temporary files replace makes ("." + base + "." +
// CreateTemp's random digits + ".tmp") and nothing a person or an agent
// names by hand.
var tempName = regexp.MustCompile(`^\..+\.[0-9]+\.tmp$`)

// Sweep removes from dir the temporary files of replacements a killed
// process never renamed (issue 22 item 5) and returns their names. The
// caller holds what keeps every other writer out of dir (the run dir's
// lock): a temp file another process is still writing must not go.
func Sweep(dir string) []string {
	var gone []string
	for _, name := range Leftovers(dir) {
		if os.Remove(filepath.Join(dir, name)) == nil {
			gone = append(gone, name)
		}
	}
	return gone
}

// Leftovers lists, and leaves, the temporary files in dir that Sweep
// would remove (flower doctor reports them).
func Leftovers(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // no dir, nothing left over
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && tempName.MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// SweepTree is Sweep in dir and every directory under it (the workbench:
// the starter's notes live in notes/, the handoff documents beside them),
// and returns the removed files' paths relative to dir.
func SweepTree(dir string) []string { return inTree(dir, Sweep) }

// LeftoversTree is Leftovers in dir and every directory under it, as
// paths relative to dir: what SweepTree would remove.
func LeftoversTree(dir string) []string { return inTree(dir, Leftovers) }

// inTree runs f in dir and every directory under it and joins what it
// returns to the directory's path relative to dir.
func inTree(dir string, f func(string) []string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil // an unreadable corner keeps its files; the rest is done
		}
		rel, _ := filepath.Rel(dir, path)
		for _, name := range f(path) {
			out = append(out, filepath.Join(rel, name))
		}
		return nil
	})
	return out
}
