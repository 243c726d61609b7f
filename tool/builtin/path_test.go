package builtin

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/flower-run/flower/tool"
)

func TestResolve(t *testing.T) {
	env := testEnv(t)
	ws := env.Workspace
	outside := t.TempDir()
	writeFile(t, ws, "sub/a.txt", "a")
	writeFile(t, outside, "secret.txt", "s")
	symlink(t, outside, filepath.Join(ws, "out"))                            // dir link leading out
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(ws, "s")) // file link leading out
	symlink(t, filepath.Join(outside, "new.txt"), filepath.Join(ws, "dangling"))
	symlink(t, "sub", filepath.Join(ws, "in")) // relative link staying in

	tests := []struct {
		path    string
		want    string // resolved path; empty when refused
		outside bool
	}{
		{"sub/a.txt", filepath.Join(ws, "sub/a.txt"), false},
		{filepath.Join(ws, "sub/a.txt"), filepath.Join(ws, "sub/a.txt"), false},
		{"./sub/../sub/a.txt", filepath.Join(ws, "sub/a.txt"), false},
		{"new/dir/file.txt", filepath.Join(ws, "new/dir/file.txt"), false},
		{"in/a.txt", filepath.Join(ws, "sub/a.txt"), false},
		{".", ws, false},
		{"../x", "", true},
		{"sub/../../x", "", true},
		{filepath.Join(outside, "secret.txt"), "", true},
		{"/etc/passwd", "", true},
		{"out/secret.txt", "", true},
		{"out/new.txt", "", true},
		{"s", "", true},
		{"dangling", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := env.resolve(tt.path)
			var oe *outsideError
			if gotOutside := errors.As(err, &oe); gotOutside != tt.outside {
				t.Fatalf("resolve(%q) = %q, %v; outside refusal = %v, want %v", tt.path, got, err, gotOutside, tt.outside)
			}
			if !tt.outside && (err != nil || got != tt.want) {
				t.Errorf("resolve(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
			}
		})
	}
}

func TestResolveAllowOutside(t *testing.T) {
	env := testEnv(t)
	env.AllowOutside = true
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	got, err := env.resolve(filepath.Join(outside, "x"))
	if want := filepath.Join(outside, "x"); err != nil || got != want {
		t.Errorf("resolve = %q, %v; want %q", got, err, want)
	}
}

// TestToolsRefuseOutside: every file tool refuses a path leading out of
// the workspace, by "..", absolute path or symlink, and touches nothing.
func TestToolsRefuseOutside(t *testing.T) {
	env := testEnv(t)
	outside := t.TempDir()
	secret := writeFile(t, outside, "secret.txt", "secret")
	symlink(t, outside, filepath.Join(env.Workspace, "link"))
	rel, err := filepath.Rel(env.Workspace, secret)
	if err != nil {
		t.Fatal(err)
	}
	byName := tool.NewRegistry(Builtins(env)...)
	for _, p := range []string{rel, secret, "link/secret.txt"} {
		tests := []struct {
			tool  string
			input map[string]any
		}{
			{"Read", map[string]any{"file_path": p}},
			{"Write", map[string]any{"file_path": p, "content": "pwned"}},
			{"Edit", map[string]any{"file_path": p, "old_string": "secret", "new_string": "pwned"}},
			{"Glob", map[string]any{"pattern": "*", "path": filepath.Dir(p)}},
			{"Grep", map[string]any{"pattern": "secret", "path": p}},
		}
		for _, tt := range tests {
			t.Run(tt.tool+" "+p, func(t *testing.T) {
				wantError(t, run(t, byName[tt.tool], tt.input), "outside the workspace")
			})
		}
	}
	if got := readFile(t, secret); got != "secret" {
		t.Errorf("outside file changed to %q", got)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}
