package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/tool"
)

// The run dir is out of every file tool's reach, inside the workspace
// (-r runs) or outside it with AllowOutside, directly or through a
// symlink (issue 10).
func TestFileToolsRefuseTheRunDir(t *testing.T) {
	env := testEnv(t)
	ws := env.Workspace
	inside := filepath.Join(ws, "runs")
	writeFile(t, inside, "sessions.db", "SECRET-STATE")
	writeFile(t, ws, "notes.txt", "SECRET-STATE is not here")
	if err := os.Symlink(inside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	writeFile(t, outside, "sessions.db", "x")
	env.Forbidden = []string{"runs-does-not-matter-relative", inside, outside}
	env.AllowOutside = true
	cases := []struct {
		tl    tool.Tool
		input map[string]any
	}{
		{&Read{Env: env}, map[string]any{"file_path": "runs/sessions.db"}},
		{&Read{Env: env}, map[string]any{"file_path": "link/sessions.db"}},
		{&Write{Env: env}, map[string]any{"file_path": "runs/sessions.db", "content": "garbage"}},
		{&Write{Env: env}, map[string]any{"file_path": filepath.Join(outside, "sessions.db"), "content": "garbage"}},
		{&Write{Env: env}, map[string]any{"file_path": "runs/new.txt", "content": "garbage"}},
		{&Edit{Env: env}, map[string]any{"file_path": "runs/sessions.db", "old_string": "SECRET", "new_string": "x"}},
		{&Glob{Env: env}, map[string]any{"pattern": "*", "path": "runs"}},
		{&Grep{Env: env}, map[string]any{"pattern": "SECRET", "path": "runs"}},
	}
	for _, c := range cases {
		res := run(t, c.tl, c.input)
		if !res.IsError || !strings.Contains(res.Content, "flower's own state") {
			t.Errorf("%s %v: %q, want a refusal naming flower's state", c.tl.Name(), c.input, res.Content)
		}
	}
	if got := readFile(t, filepath.Join(inside, "sessions.db")); got != "SECRET-STATE" {
		t.Errorf("sessions.db now holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(inside, "new.txt")); err == nil {
		t.Error("Write created a file in the run dir")
	}
	// A search of the whole workspace skips the run dir.
	if res := run(t, &Grep{Env: env}, map[string]any{"pattern": "SECRET", "output_mode": "files_with_matches"}); strings.Contains(res.Content, "sessions.db") || !strings.Contains(res.Content, "notes.txt") {
		t.Errorf("Grep of the workspace: %q, want notes.txt and not the run dir", res.Content)
	}
	if res := run(t, &Glob{Env: env}, map[string]any{"pattern": "**/*"}); strings.Contains(res.Content, "sessions.db") || !strings.Contains(res.Content, "notes.txt") {
		t.Errorf("Glob of the workspace: %q, want notes.txt and not the run dir", res.Content)
	}
}
