package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/flower-run/flower/tool"
)

// MaxGlobResults caps how many paths Glob returns.
const MaxGlobResults = 1000

// Glob finds files by name pattern.
type Glob struct{ Env Env }

var _ tool.Tool = (*Glob)(nil)

func (*Glob) Name() string      { return "Glob" }
func (*Glob) Class() tool.Class { return tool.Pure }
func (*Glob) Description() string {
	return `Finds files whose paths match a glob pattern, such as "**/*.go" or "src/**/*.{ts,tsx}".

- Patterns: * matches within one path segment, ** matches any number of directories, ? one character, [abc] a character class, {a,b} alternatives. The pattern is matched against paths relative to the search directory, so "*.go" finds Go files in that directory only, while "**/*.go" finds them at any depth.
- path is the directory to search, absolute or relative to the workspace; it defaults to the workspace.
- Returns matching files (not directories), one per line, relative to the workspace, most recently modified first. At most 1000 are listed; narrow the pattern if you hit the cap.
- Files under .git are left out unless the pattern names .git. Symlinked directories are not followed.
- Use Grep to search file contents.`
}

func (*Glob) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "The glob pattern to match file paths against, e.g. \"**/*.go\"."},
    "path": {"type": "string", "description": "The directory to search in, absolute or relative to the workspace. Defaults to the workspace."}
  },
  "required": ["pattern"]
}`)
}

type globInput struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

func (t *Glob) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	env := t.Env.withDefaults()
	var in globInput
	if err := decodeInput(input, &in, "pattern"); err != nil {
		return tool.Errorf("Glob: %v", err), nil
	}
	dir, pattern, err := in.split()
	if err != nil {
		return tool.Errorf("Glob: %v", err), nil
	}
	root, err := env.searchDir(dir)
	if err != nil {
		return tool.Errorf("Glob: %v", err), nil
	}
	files, err := globFiles(ctx, env, root, pattern)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return tool.Result{}, ctxErr
	}
	if err != nil {
		return tool.Errorf("Glob: %v", err), nil
	}
	return tool.Result{Content: formatGlob(files)}, nil
}

// split normalizes the input into a directory and a pattern relative to it.
// An absolute pattern carries its own directory.
func (in globInput) split() (dir, pattern string, err error) {
	dir, pattern = in.Path, filepath.ToSlash(strings.TrimSpace(in.Pattern))
	if path.IsAbs(pattern) {
		var base string
		base, pattern = doublestar.SplitPattern(pattern)
		dir = filepath.FromSlash(base)
	}
	for strings.HasPrefix(pattern, "./") {
		pattern = pattern[2:]
	}
	switch {
	case pattern == "":
		return "", "", errors.New("pattern is empty")
	case slices.Contains(strings.Split(pattern, "/"), ".."):
		return "", "", errors.New(`pattern must not contain ".."; set path to the directory to search instead`)
	case !doublestar.ValidatePattern(pattern):
		return "", "", fmt.Errorf("invalid glob pattern %q", pattern)
	}
	return dir, pattern, nil
}

// searchDir resolves Glob's optional directory argument.
func (e Env) searchDir(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	root, err := e.resolve(dir)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(root)
	if err != nil {
		return "", fmt.Errorf("path %s: %w", e.display(root), err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("path %s is not a directory", e.display(root))
	}
	return root, nil
}

type globMatch struct {
	name  string // as shown to the model
	mtime time.Time
}

// globFiles walks root for files matching pattern, skipping what leaves
// the workspace through a symlink.
func globFiles(ctx context.Context, env Env, root, pattern string) ([]globMatch, error) {
	base, _ := doublestar.SplitPattern(pattern)
	if _, err := env.resolve(filepath.Join(root, filepath.FromSlash(base))); err != nil {
		return nil, err // the literal prefix is followed even without follow
	}
	inGit := strings.Contains(pattern, ".git")
	show := env.displayer()
	hidden := env.forbiddenRoots()
	var out []globMatch
	err := doublestar.GlobWalk(os.DirFS(root), pattern, func(p string, d fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		full := filepath.Join(root, filepath.FromSlash(p))
		if (!inGit && underGit(p)) || forbidden(hidden, full) || env.hides(full) || !keepMatch(env, full, d) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // vanished while walking
		}
		out = append(out, globMatch{name: show(full), mtime: info.ModTime()})
		return nil
	}, doublestar.WithFilesOnly(), doublestar.WithNoFollow())
	return out, err
}

func underGit(p string) bool {
	return strings.HasPrefix(p, ".git/") || strings.Contains(p, "/.git/")
}

// keepMatch drops symlinks to directories (WithNoFollow reports them as
// files) and symlinks that point out of the workspace.
func keepMatch(env Env, full string, d fs.DirEntry) bool {
	if d.Type()&fs.ModeSymlink == 0 {
		return true
	}
	if info, err := os.Stat(full); err == nil && info.IsDir() {
		return false
	}
	_, err := env.resolve(full)
	return err == nil
}

// formatGlob lists matches newest first (the files being worked on are
// usually the ones wanted), by name among equals, capped.
func formatGlob(files []globMatch) string {
	if len(files) == 0 {
		return "No files found"
	}
	slices.SortFunc(files, func(a, b globMatch) int {
		if c := b.mtime.Compare(a.mtime); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	var b strings.Builder
	for _, f := range files[:min(len(files), MaxGlobResults)] {
		b.WriteString(f.name)
		b.WriteByte('\n')
	}
	if len(files) > MaxGlobResults {
		fmt.Fprintf(&b, "(showing the %d most recently modified of %d files; narrow the pattern or path to see the rest)\n",
			MaxGlobResults, len(files))
	}
	return strings.TrimSuffix(b.String(), "\n")
}
