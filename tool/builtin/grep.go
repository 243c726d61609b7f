package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/flower-run/flower/tool"
)

const (
	// MaxGrepFileSize is the largest file Grep searches; bigger ones are
	// logs or data more often than code, and would stall the walk.
	MaxGrepFileSize = 10 << 20
	// maxGrepLineChars cuts matched lines in content mode, so one line of
	// minified code cannot fill the whole output.
	maxGrepLineChars = 500
)

// Grep output modes.
const (
	grepFiles   = "files_with_matches"
	grepContent = "content"
	grepCount   = "count"
)

// Grep searches file contents with a regular expression.
type Grep struct{ Env Env }

var _ tool.Tool = (*Grep)(nil)

func (*Grep) Name() string      { return "Grep" }
func (*Grep) Class() tool.Class { return tool.Pure }
func (*Grep) Description() string {
	return `Searches file contents for a regular expression, line by line.

- pattern uses Go RE2 syntax (like ripgrep's): "func\s+\w+", "log.*Error". There are no backreferences or lookarounds. Escape literal braces and dots: "interface\{\}", "a\.b".
- path is a file or directory to search, absolute or relative to the workspace; it defaults to the workspace. Directories are searched recursively, skipping .git, .hg and .svn, binary files, symlinks and files over 10 MB.
- glob limits which files are searched: "*.go" matches file names at any depth, "src/**/*.ts" matches paths relative to path, "*.{ts,tsx}" gives alternatives.
- output_mode: "files_with_matches" (default) lists the matching files; "content" shows matching lines as path:line:text; "count" shows path:number of matching lines.
- -i makes the search case-insensitive.
- Results are in path order and capped; narrow path, glob or pattern if the output says it was capped.
- Prefer this tool to running grep or rg through Bash.`
}

func (*Grep) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "The regular expression (Go RE2 syntax) to search for."},
    "path": {"type": "string", "description": "The file or directory to search, absolute or relative to the workspace. Defaults to the workspace."},
    "glob": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.go\" or \"src/**/*.{ts,tsx}\"."},
    "output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"], "description": "\"files_with_matches\" (default) lists matching files, \"content\" shows matching lines as path:line:text, \"count\" shows match counts per file."},
    "-i": {"type": "boolean", "description": "Case-insensitive search."}
  },
  "required": ["pattern"]
}`)
}

type grepInput struct {
	Pattern    string   `json:"pattern"`
	Path       string   `json:"path"`
	Glob       string   `json:"glob"`
	OutputMode string   `json:"output_mode"`
	IgnoreCase flexBool `json:"-i"`
}

func (t *Grep) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	env := t.Env.withDefaults()
	var in grepInput
	if err := decodeInput(input, &in, "pattern"); err != nil {
		return tool.Errorf("Grep: %v", err), nil
	}
	g, err := in.searcher(env)
	if err != nil {
		return tool.Errorf("Grep: %v", err), nil
	}
	target, err := env.resolve(orDefault(in.Path, "."))
	if err != nil {
		return tool.Errorf("Grep: %v", err), nil
	}
	if err := g.search(ctx, target); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return tool.Result{}, ctxErr
		}
		return tool.Errorf("Grep: %v", err), nil
	}
	return tool.Result{Content: g.result()}, nil
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// searcher validates the input and builds the search it describes.
func (in grepInput) searcher(env Env) (*grepper, error) {
	mode := orDefault(in.OutputMode, grepFiles)
	if mode != grepFiles && mode != grepContent && mode != grepCount {
		return nil, fmt.Errorf("output_mode must be %q, %q or %q, got %q", grepFiles, grepContent, grepCount, mode)
	}
	expr := in.Pattern
	if in.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression: %w", err)
	}
	if in.Glob != "" && !doublestar.ValidatePattern(in.Glob) {
		return nil, fmt.Errorf("invalid glob %q", in.Glob)
	}
	return &grepper{env: env, show: env.displayer(), re: re, mode: mode, glob: in.Glob}, nil
}

// errFull stops the walk once the output cap is reached.
var errFull = errors.New("output full")

// grepper is one search: its settings and the output it has gathered.
type grepper struct {
	env     Env
	show    func(string) string // display of a path
	re      *regexp.Regexp
	mode    string
	glob    string
	out     strings.Builder
	full    bool // out reached env.OutputCap
	skipped int  // files over MaxGrepFileSize
}

// search greps target: a file directly, a directory recursively.
func (g *grepper) search(ctx context.Context, target string) error {
	info, err := os.Stat(target)
	if err != nil {
		return fmt.Errorf("path %s: %w", g.show(target), err)
	}
	if !info.IsDir() {
		err = g.file(target)
	} else {
		err = g.walk(ctx, target)
	}
	if errors.Is(err, errFull) {
		return nil
	}
	return err
}

func (g *grepper) walk(ctx context.Context, root string) error {
	hidden := g.env.forbiddenRoots()
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		switch {
		case err != nil:
			return nil // unreadable: skip it, search the rest
		case d.IsDir():
			if p != root && (isVCSDir(d.Name()) || forbidden(hidden, p)) {
				return fs.SkipDir
			}
			return nil
		case !d.Type().IsRegular() || !g.wanted(root, p):
			return nil // symlinks could lead out of the workspace
		}
		return g.file(p)
	})
}

func isVCSDir(name string) bool { return name == ".git" || name == ".hg" || name == ".svn" }

// wanted applies the glob filter: a glob with a slash matches the path
// relative to the search root, one without matches the file name.
func (g *grepper) wanted(root, p string) bool {
	if g.glob == "" {
		return true
	}
	name := filepath.Base(p)
	if strings.Contains(g.glob, "/") {
		rel, _ := filepath.Rel(root, p)
		name = filepath.ToSlash(rel)
	}
	return doublestar.MatchUnvalidated(g.glob, name)
}

// file searches one file, skipping big and binary ones.
func (g *grepper) file(p string) error {
	if g.env.hides(p) {
		return nil
	}
	info, err := os.Stat(p)
	if err != nil {
		return nil
	}
	if info.Size() > MaxGrepFileSize {
		g.skipped++
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil || isBinary(data[:min(len(data), sniffLen)]) {
		return nil
	}
	return g.lines(p, data)
}

// lines matches data line by line, so that ^ and $ mean what they mean
// in grep, and writes what the mode asks for.
func (g *grepper) lines(p string, data []byte) error {
	count := 0
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !g.re.Match(line) {
			continue
		}
		count++
		switch g.mode {
		case grepFiles:
			return g.emit(g.show(p))
		case grepContent:
			text := cutLine(line, maxGrepLineChars, false)
			if err := g.emit(fmt.Sprintf("%s:%d:%s", g.show(p), n, text)); err != nil {
				return err
			}
		}
	}
	if g.mode == grepCount && count > 0 {
		return g.emit(fmt.Sprintf("%s:%d", g.show(p), count))
	}
	return nil
}

// emit adds one output line, or reports errFull when it would pass the cap.
func (g *grepper) emit(line string) error {
	if g.out.Len()+len(line)+1 > g.env.OutputCap {
		g.full = true
		return errFull
	}
	g.out.WriteString(line)
	g.out.WriteByte('\n')
	return nil
}

func (g *grepper) result() string {
	s := strings.TrimSuffix(g.out.String(), "\n")
	if s == "" {
		s = "No matches found"
	}
	if g.full {
		s += fmt.Sprintf("\n(output capped at %d bytes; narrow the search with path, glob or a more specific pattern)", g.env.OutputCap)
	}
	if g.skipped > 0 {
		s += fmt.Sprintf("\n(%d file%s over %d MB not searched)", g.skipped, plural(g.skipped), MaxGrepFileSize>>20)
	}
	return s
}
