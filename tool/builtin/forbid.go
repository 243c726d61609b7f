package builtin

import (
	"fmt"
	"path/filepath"
)

// forbiddenError refuses a path inside a directory no file tool may touch:
// flower's own durable state (issue 10). Unlike the workspace bound, it
// holds even with AllowOutside and even when the state sits inside the
// workspace (-r runs).
type forbiddenError struct{ path string }

func (e *forbiddenError) Error() string {
	return fmt.Sprintf("path %q is flower's own state: no tool may read or change it", e.path)
}

// forbiddenRoots are the real paths of Env.Forbidden.
func (e Env) forbiddenRoots() []string {
	var roots []string
	for _, f := range e.Forbidden {
		if f == "" {
			continue
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			continue
		}
		if r, err := realPath(abs); err == nil {
			abs = r
		}
		roots = append(roots, filepath.Clean(abs))
	}
	return roots
}

// forbidden reports whether the real path p is inside one of roots.
func forbidden(roots []string, p string) bool {
	for _, r := range roots {
		if within(r, p) {
			return true
		}
	}
	return false
}
