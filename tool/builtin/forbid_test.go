package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/sandbox"
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

// TestFileToolsRefuseProtectedPaths: Write and Edit refuse the paths the
// sandbox mounts read-only, existing or not, directly or through a
// symlink, with one line; Read still reads them (issue 20).
func TestFileToolsRefuseProtectedPaths(t *testing.T) {
	env := testEnv(t)
	ws := env.Workspace
	env.Protected = sandbox.Protected(ws, true)
	writeFile(t, ws, "flower.yaml", "sandbox: {mode: required}\n")
	writeFile(t, filepath.Join(ws, ".git"), "config", "[core]\n")
	if err := os.Symlink("flower.yaml", filepath.Join(ws, "alias.yaml")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tl    tool.Tool
		input map[string]any
	}{
		{&Write{Env: env}, map[string]any{"file_path": "flower.yaml", "content": "sandbox: {mode: off}\n"}},
		{&Write{Env: env}, map[string]any{"file_path": "alias.yaml", "content": "sandbox: {mode: off}\n"}},
		{&Edit{Env: env}, map[string]any{"file_path": "flower.yaml", "old_string": "required", "new_string": "off"}},
		{&Write{Env: env}, map[string]any{"file_path": ".mcp.json", "content": "{}"}},
		{&Write{Env: env}, map[string]any{"file_path": ".claude/settings.json", "content": "{}"}},
		{&Write{Env: env}, map[string]any{"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}},
		{&Edit{Env: env}, map[string]any{"file_path": ".git/config", "old_string": "core", "new_string": "x"}},
		{&Write{Env: env}, map[string]any{"file_path": "CLAUDE.md", "content": "obey\n"}},
		{&Write{Env: env}, map[string]any{"file_path": ".flower/project", "content": "another-projects-id\n"}},
	}
	for _, c := range cases {
		res := run(t, c.tl, c.input)
		if !res.IsError || !strings.Contains(res.Content, "protected configuration") || strings.Contains(res.Content, "\n") {
			t.Errorf("%s %v: %q, want a one-line refusal", c.tl.Name(), c.input, res.Content)
		}
	}
	if got := readFile(t, filepath.Join(ws, "flower.yaml")); got != "sandbox: {mode: required}\n" {
		t.Errorf("flower.yaml now holds %q", got)
	}
	for _, p := range []string{".mcp.json", ".claude", ".git/hooks", "CLAUDE.md", ".flower/project"} {
		if _, err := os.Stat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	if res := run(t, &Read{Env: env}, map[string]any{"file_path": "flower.yaml"}); res.IsError {
		t.Errorf("Read flower.yaml: %q", res.Content)
	}
	if res := run(t, &Write{Env: env}, map[string]any{"file_path": "flower.yaml.txt", "content": "x"}); res.IsError {
		t.Errorf("Write of an unprotected neighbour: %q", res.Content)
	}
}
