package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// outsideError refuses a path that leaves the workspace. The confinement
// guards against mistakes, not against a hostile model: Bash can reach
// anything the flower process can.
type outsideError struct {
	path, workspace string
}

func (e *outsideError) Error() string {
	return fmt.Sprintf("path %q is outside the workspace %s; file tools only work inside it",
		e.path, e.workspace)
}

// resolve turns a model-given path (absolute or relative to the workspace)
// into the real path to operate on, with symlinks of its existing prefix
// resolved, and refuses it when it leaves the workspace. Resolving first
// means a symlink inside the workspace that points out is refused too.
func (e Env) resolve(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New("path is empty")
	}
	p = expandHome(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.Workspace, p)
	}
	real, err := realPath(filepath.Clean(p))
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", p, err)
	}
	if forbidden(e.forbiddenRoots(), real) {
		return "", &forbiddenError{path: p}
	}
	if e.AllowOutside {
		return real, nil
	}
	root, err := filepath.EvalSymlinks(e.Workspace)
	if err != nil {
		return "", fmt.Errorf("resolve workspace: %w", err)
	}
	if !within(root, real) {
		return "", &outsideError{path: p, workspace: e.Workspace}
	}
	return real, nil
}

// maxLinks bounds symlink chains, as the kernel does (ELOOP).
const maxLinks = 40

// realPath resolves the symlinks of p's longest existing prefix and appends
// the rest. A dangling symlink is followed by hand, since writing through it
// would create its target.
func realPath(p string) (string, error) {
	rest := ""
	for hops := 0; ; {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if target, lerr := os.Readlink(p); lerr == nil {
			if hops++; hops > maxLinks {
				return "", fmt.Errorf("too many levels of symbolic links")
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			p = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest), nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// within reports whether p is root or below it; both must be clean.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// display shows a resolved path to the model: relative to the workspace
// when inside it (so it can be passed back as is), absolute otherwise.
func (e Env) display(p string) string { return e.displayer()(p) }

// displayer is display with the workspace resolved once, for tools that
// show many paths.
func (e Env) displayer() func(string) string {
	root, err := filepath.EvalSymlinks(e.Workspace)
	if err != nil {
		root = e.Workspace
	}
	return func(p string) string {
		if rel, err := filepath.Rel(root, p); err == nil && within(root, p) {
			return rel
		}
		return p
	}
}
