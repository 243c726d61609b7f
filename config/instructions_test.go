package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstructions(t *testing.T) {
	user := userConfig(t, "")
	userAgents := filepath.Join(filepath.Dir(user), AgentsFile)
	ws := t.TempDir()
	if got := Instructions(ws); len(got) != 0 || InstructionsPrompt(got) != "" {
		t.Fatalf("Instructions with no files = %+v, want none", got)
	}

	writeFile(t, filepath.Join(ws, ClaudeFile), "use tabs\n")
	got := Instructions(ws)
	if len(got) != 1 || got[0].Path != filepath.Join(ws, ClaudeFile) || got[0].Text != "use tabs" {
		t.Fatalf("CLAUDE.md alone: %+v", got)
	}

	writeFile(t, filepath.Join(ws, AgentsFile), "run go test\n")
	if err := os.MkdirAll(filepath.Dir(userAgents), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, userAgents, "answer in French\n")
	got = Instructions(ws)
	if len(got) != 2 || got[0].Path != userAgents || got[1].Path != filepath.Join(ws, AgentsFile) {
		t.Fatalf("AGENTS.md must replace CLAUDE.md and follow the user's file: %+v", got)
	}
	p := InstructionsPrompt(got)
	for _, want := range []string{"answer in French", "run go test", userAgents} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "use tabs") {
		t.Errorf("CLAUDE.md read although AGENTS.md exists:\n%s", p)
	}
}

func TestInstructionsCutsHugeFiles(t *testing.T) {
	userConfig(t, "")
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, AgentsFile), strings.Repeat("x", maxInstructions+10))
	got := Instructions(ws)
	if len(got) != 1 || len(got[0].Text) > maxInstructions+200 || !strings.Contains(got[0].Text, "cut at 64 KiB") {
		t.Fatalf("a huge AGENTS.md: %d bytes, want it cut with a note", len(got[0].Text))
	}
}
