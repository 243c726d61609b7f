package builtin

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	env := testEnv(t)
	ws := env.Workspace
	tests := []struct {
		name, path, content, want string
	}{
		{"create", "a.txt", "hello\n", "Created a.txt (6 bytes written)"},
		{"create with parents", "x/y/z.txt", "deep", "Created x/y/z.txt (4 bytes written)"},
		{"overwrite", "a.txt", "bye", "Overwrote a.txt (3 bytes written)"},
		{"empty content", "empty.txt", "", "Created empty.txt (0 bytes written)"},
		{"absolute", filepath.Join(ws, "abs.txt"), "abs", "Created abs.txt (3 bytes written)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, &Write{Env: env}, map[string]any{"file_path": tt.path, "content": tt.content})
			if res.IsError || res.Content != tt.want {
				t.Errorf("got (error=%v) %q, want %q", res.IsError, res.Content, tt.want)
			}
			p := tt.path
			if !filepath.IsAbs(p) {
				p = filepath.Join(ws, p)
			}
			if got := readFile(t, p); got != tt.content {
				t.Errorf("file holds %q, want %q", got, tt.content)
			}
			if left := tmpLeftovers(t, filepath.Dir(p)); len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
}

func TestWriteKeepsMode(t *testing.T) {
	env := testEnv(t)
	p := writeFile(t, env.Workspace, "run.sh", "#!/bin/sh\n")
	if err := os.Chmod(p, 0o751); err != nil {
		t.Fatal(err)
	}
	wantOK(t, run(t, &Write{Env: env}, map[string]any{"file_path": "run.sh", "content": "#!/bin/sh\necho hi\n"}))
	assertMode(t, p, 0o751)
	wantOK(t, run(t, &Write{Env: env}, map[string]any{"file_path": "new.txt", "content": "x"}))
	assertMode(t, filepath.Join(env.Workspace, "new.txt"), newFileMode)
}

func TestWriteErrors(t *testing.T) {
	env := testEnv(t)
	writeFile(t, env.Workspace, "dir/x.txt", "x")
	writeFile(t, env.Workspace, "file", "x")
	tests := []struct {
		name, path, want string
	}{
		{"directory", "dir", "dir: is a directory"},
		{"parent is a file", "file/x.txt", "file/x.txt"},
		{"outside", "../escape.txt", "outside the workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, run(t, &Write{Env: env}, map[string]any{"file_path": tt.path, "content": "c"}), tt.want)
			if left := tmpLeftovers(t, env.Workspace); len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
}

// TestWriteAtomicFailure: when the rename cannot happen, the old file is
// intact and the temporary file is removed.
func TestWriteAtomicFailure(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.Mkdir(target, 0o755); err != nil { // rename over a non-empty dir fails
		t.Fatal(err)
	}
	writeFile(t, target, "keep", "k")
	if err := writeAtomic(target, []byte("data"), 0o644); err == nil {
		t.Fatal("writeAtomic over a non-empty directory: err = nil")
	}
	if left := tmpLeftovers(t, dir); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
	if got := readFile(t, filepath.Join(target, "keep")); got != "k" {
		t.Errorf("existing content changed: %q", got)
	}
}

func assertMode(t *testing.T, p string, want os.FileMode) {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("mode of %s = %v, want %v", p, got, want)
	}
}
