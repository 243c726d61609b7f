package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func grepTree(t *testing.T) Env {
	t.Helper()
	env := testEnv(t)
	ws := env.Workspace
	writeFile(t, ws, "main.go", "package main\n\nfunc main() {\n\tTODO()\n}\n")
	writeFile(t, ws, "pkg/util.go", "package pkg\n// todo: later\nfunc TODO() {}\n")
	writeFile(t, ws, "pkg/util_test.go", "package pkg\n")
	writeFile(t, ws, "web/app.ts", "// TODO ts\r\n")
	writeFile(t, ws, "notes.md", "TODO list\nTODO again\n")
	writeFile(t, ws, ".git/config", "TODO in git\n")
	writeFile(t, ws, "bin.dat", "TODO\x00binary")
	return env
}

func TestGrep(t *testing.T) {
	env := grepTree(t)
	tests := []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"files default", map[string]any{"pattern": "TODO"}, "main.go\nnotes.md\npkg/util.go\nweb/app.ts"},
		{"content", map[string]any{"pattern": "TODO", "output_mode": "content"},
			"main.go:4:\tTODO()\nnotes.md:1:TODO list\nnotes.md:2:TODO again\npkg/util.go:3:func TODO() {}\nweb/app.ts:1:// TODO ts"},
		{"count", map[string]any{"pattern": "TODO", "output_mode": "count"}, "main.go:1\nnotes.md:2\npkg/util.go:1\nweb/app.ts:1"},
		{"ignore case", map[string]any{"pattern": "todo:", "-i": true, "output_mode": "content"}, "pkg/util.go:2:// todo: later"},
		{"case sensitive", map[string]any{"pattern": "todo:"}, "pkg/util.go"},
		{"anchors are per line", map[string]any{"pattern": "^func", "output_mode": "content"}, "main.go:3:func main() {\npkg/util.go:3:func TODO() {}"},
		{"glob by name", map[string]any{"pattern": "TODO", "glob": "*.go"}, "main.go\npkg/util.go"},
		{"glob by path", map[string]any{"pattern": "package", "glob": "pkg/**/*_test.go"}, "pkg/util_test.go"},
		{"glob alternatives", map[string]any{"pattern": "TODO", "glob": "*.{ts,md}"}, "notes.md\nweb/app.ts"},
		{"path dir", map[string]any{"pattern": "TODO", "path": "pkg"}, "pkg/util.go"},
		{"path file", map[string]any{"pattern": "TODO", "path": "notes.md", "output_mode": "count"}, "notes.md:2"},
		{"path git when asked", map[string]any{"pattern": "TODO", "path": ".git"}, ".git/config"},
		{"no match", map[string]any{"pattern": "NOPE"}, "No matches found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, &Grep{Env: env}, tt.input)
			if res.IsError || res.Content != tt.want {
				t.Errorf("got (error=%v)\n%q\nwant\n%q", res.IsError, res.Content, tt.want)
			}
		})
	}
}

func TestGrepErrors(t *testing.T) {
	env := grepTree(t)
	tests := []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"bad regexp", map[string]any{"pattern": "a("}, "invalid regular expression"},
		{"bad mode", map[string]any{"pattern": "a", "output_mode": "lines"}, `output_mode must be "files_with_matches", "content" or "count"`},
		{"bad glob", map[string]any{"pattern": "a", "glob": "[x"}, "invalid glob"},
		{"missing path", map[string]any{"pattern": "a", "path": "nope"}, "nope"},
		{"outside", map[string]any{"pattern": "a", "path": "/"}, "outside the workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, run(t, &Grep{Env: env}, tt.input), tt.want)
		})
	}
}

func TestGrepCaps(t *testing.T) {
	env := testEnv(t)
	env.OutputCap = 100
	writeFile(t, env.Workspace, "many.txt", strings.Repeat("match here\n", 50))
	writeFile(t, env.Workspace, "long.txt", "match"+strings.Repeat("x", 1000)+"\n")
	big := writeFile(t, env.Workspace, "big.log", "match\n")
	if err := os.Truncate(big, MaxGrepFileSize+1); err != nil {
		t.Fatal(err)
	}

	res := run(t, &Grep{Env: env}, map[string]any{"pattern": "match", "output_mode": "content"})
	wantOK(t, res, "output capped at 100 bytes", "1 file over 10 MB not searched")
	if strings.Contains(res.Content, "big.log") {
		t.Errorf("searched a file over the size limit")
	}

	env.OutputCap = DefaultOutputCap
	res = run(t, &Grep{Env: env}, map[string]any{"pattern": "match", "path": "long.txt", "output_mode": "content"})
	want := "long.txt:1:match" + strings.Repeat("x", maxGrepLineChars-5) + " … [line cut]"
	if res.Content != want {
		t.Errorf("long line: got %q, want %q", res.Content, want)
	}
}

// TestGrepSkipsSymlinks: a walk does not follow symlinks out of the
// workspace.
func TestGrepSkipsSymlinks(t *testing.T) {
	env := testEnv(t)
	outside := t.TempDir()
	writeFile(t, outside, "secret.txt", "needle")
	symlink(t, outside, filepath.Join(env.Workspace, "outdir"))
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(env.Workspace, "s.txt"))
	res := run(t, &Grep{Env: env}, map[string]any{"pattern": "needle"})
	if res.Content != "No matches found" {
		t.Errorf("got %q, want no matches", res.Content)
	}
}
