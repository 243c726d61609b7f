package permission

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// checkGlob refuses a path pattern doublestar cannot match.
func checkGlob(g string) error {
	if !doublestar.ValidatePattern(g) {
		return fmt.Errorf("%q is not a valid glob (use *, ** and ? as in .gitignore)", g)
	}
	return nil
}

// absGlob makes a path pattern absolute, reading it as .gitignore does:
// "//x" is absolute, "~/x" is under home, "/x", "./x" and "x/y" are
// under the workspace, and a pattern without a slash matches that name
// in any directory.
func absGlob(g, workspace, home string) string {
	g = strings.TrimSuffix(g, "/")
	ws := filepath.ToSlash(workspace)
	switch {
	case strings.HasPrefix(g, "//"):
		return path.Clean(g[1:])
	case strings.HasPrefix(g, "~/"):
		return path.Join(filepath.ToSlash(home), g[2:])
	case strings.HasPrefix(g, "/"), strings.HasPrefix(g, "./"), strings.Contains(g, "/"):
		return path.Join(ws, g)
	}
	return "/**/" + g
}

// globMatch reports whether the absolute path p, or a directory holding
// it, matches the absolute pattern g: a rule on a directory covers what
// is in it.
func globMatch(g, p string) bool {
	for q := filepath.ToSlash(p); ; q = path.Dir(q) {
		if ok, _ := doublestar.Match(g, q); ok {
			return true
		}
		if q == path.Dir(q) {
			return false
		}
	}
}
