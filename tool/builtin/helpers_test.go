package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/tool"
)

// testEnv is an Env on a fresh workspace, with symlinks of the temp dir
// resolved so paths compare equal.
func testEnv(t *testing.T) Env {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return Env{Workspace: ws}.withDefaults()
}

// run calls tl with input marshalled to JSON and fails on a Go error.
func run(t *testing.T, tl tool.Tool, input any) tool.Result {
	t.Helper()
	raw, ok := input.(string)
	if !ok {
		b, err := json.Marshal(input)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	res, err := tl.Run(context.Background(), json.RawMessage(raw))
	if err != nil {
		t.Fatalf("%s.Run(%s): Go error %v", tl.Name(), raw, err)
	}
	return res
}

// writeFile creates a file under dir, with parents.
func writeFile(t *testing.T, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantError fails unless res is an error result containing every part.
func wantError(t *testing.T, res tool.Result, parts ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("IsError = false, want true; content:\n%s", res.Content)
	}
	wantContains(t, res.Content, parts...)
}

// wantOK fails unless res is a success containing every part.
func wantOK(t *testing.T, res tool.Result, parts ...string) {
	t.Helper()
	if res.IsError {
		t.Fatalf("IsError = true, want false; content:\n%s", res.Content)
	}
	wantContains(t, res.Content, parts...)
}

func wantContains(t *testing.T, got string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(got, p) {
			t.Errorf("content does not contain %q; got:\n%s", p, got)
		}
	}
}

// tmpLeftovers lists temporary files atomic writes may have left in dir.
func tmpLeftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
