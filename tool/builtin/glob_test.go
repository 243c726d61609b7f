package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// globTree makes a workspace whose files have distinct modification times,
// oldest first in the order listed.
func globTree(t *testing.T, files ...string) Env {
	t.Helper()
	env := testEnv(t)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, f := range files {
		p := writeFile(t, env.Workspace, f, f)
		mt := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

func TestGlob(t *testing.T) {
	env := globTree(t, "main.go", "a/b/deep.go", "a/x.txt", "a/c.go", ".git/HEAD.go", "cmd/tool/z.go")
	tests := []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"top level only", map[string]any{"pattern": "*.go"}, "main.go"},
		{"doublestar, newest first", map[string]any{"pattern": "**/*.go"}, "cmd/tool/z.go\na/c.go\na/b/deep.go\nmain.go"},
		{"leading ./", map[string]any{"pattern": "./a/**/*.go"}, "a/c.go\na/b/deep.go"},
		{"path", map[string]any{"pattern": "**/*.go", "path": "a"}, "a/c.go\na/b/deep.go"},
		{"path absolute", map[string]any{"pattern": "*", "path": filepath.Join(env.Workspace, "a")}, "a/c.go\na/x.txt"},
		{"absolute pattern", map[string]any{"pattern": filepath.Join(env.Workspace, "a") + "/*.txt"}, "a/x.txt"},
		{"alternatives", map[string]any{"pattern": "a/*.{txt,go}"}, "a/c.go\na/x.txt"},
		{"git when asked", map[string]any{"pattern": ".git/*"}, ".git/HEAD.go"},
		{"no match", map[string]any{"pattern": "**/*.rs"}, "No files found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, &Glob{Env: env}, tt.input)
			if res.IsError || res.Content != tt.want {
				t.Errorf("got (error=%v)\n%s\nwant\n%s", res.IsError, res.Content, tt.want)
			}
		})
	}
}

func TestGlobErrors(t *testing.T) {
	env := globTree(t, "a/x.txt")
	tests := []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"empty pattern", map[string]any{"pattern": ""}, "pattern is empty"},
		{"dotdot", map[string]any{"pattern": "../**/*"}, `must not contain ".."`},
		{"bad pattern", map[string]any{"pattern": "a/[x"}, "invalid glob pattern"},
		{"path is a file", map[string]any{"pattern": "*", "path": "a/x.txt"}, "not a directory"},
		{"path missing", map[string]any{"pattern": "*", "path": "nope"}, "nope"},
		{"outside", map[string]any{"pattern": "*", "path": ".."}, "outside the workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, run(t, &Glob{Env: env}, tt.input), tt.want)
		})
	}
}

func TestGlobCap(t *testing.T) {
	env := testEnv(t)
	for i := range MaxGlobResults + 5 {
		writeFile(t, env.Workspace, fmt.Sprintf("f%04d.txt", i), "")
	}
	res := run(t, &Glob{Env: env}, map[string]any{"pattern": "*.txt"})
	lines := strings.Split(res.Content, "\n")
	if got, want := len(lines), MaxGlobResults+1; got != want {
		t.Errorf("%d lines, want %d", got, want)
	}
	wantOK(t, res, fmt.Sprintf("showing the %d most recently modified of %d files", MaxGlobResults, MaxGlobResults+5))
}

// TestGlobSymlinks: a directory symlink is not followed by **, and a file
// symlink pointing out of the workspace is not listed.
func TestGlobSymlinks(t *testing.T) {
	env := testEnv(t)
	outside := t.TempDir()
	writeFile(t, outside, "secret.txt", "s")
	writeFile(t, env.Workspace, "in.txt", "i")
	symlink(t, outside, filepath.Join(env.Workspace, "outdir"))
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(env.Workspace, "out.txt"))
	symlink(t, "in.txt", filepath.Join(env.Workspace, "alias.txt"))
	res := run(t, &Glob{Env: env}, map[string]any{"pattern": "**/*"})
	got := strings.Split(res.Content, "\n")
	for _, want := range []string{"in.txt", "alias.txt"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("missing %s in %v", want, got)
		}
	}
	for _, bad := range []string{"secret", "out.txt", "outdir"} {
		if strings.Contains(res.Content, bad) {
			t.Errorf("listed %s: %v", bad, got)
		}
	}
}
