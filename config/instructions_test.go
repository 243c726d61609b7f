package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstructions: the user's files, then AGENTS.md and CLAUDE.md both
// (issue 21: both are read), then CLAUDE.local.md.
func TestInstructions(t *testing.T) {
	user := userConfig(t, "")
	home := t.TempDir()
	t.Setenv("HOME", home)
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
	writeFile(t, filepath.Join(ws, ClaudeLocalMemo), "my sandbox URL is x\n")
	for _, p := range []string{userAgents, filepath.Join(home, ".claude", ClaudeFile)} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, userAgents, "answer in French\n")
	writeFile(t, filepath.Join(home, ".claude", ClaudeFile), "sign commits\n")
	got = Instructions(ws)
	want := []string{userAgents, filepath.Join(home, ".claude", ClaudeFile), filepath.Join(ws, AgentsFile),
		filepath.Join(ws, ClaudeFile), filepath.Join(ws, ClaudeLocalMemo)}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want the files %v", got, want)
	}
	for i := range want {
		if got[i].Path != want[i] {
			t.Errorf("file %d: %s, want %s", i, got[i].Path, want[i])
		}
	}
	p := InstructionsPrompt(got)
	for _, w := range []string{"answer in French", "sign commits", "run go test", "use tabs", "my sandbox URL", userAgents} {
		if !strings.Contains(p, w) {
			t.Errorf("prompt lacks %q:\n%s", w, p)
		}
	}
}

// TestInstructionImports: @path imports, relative to the importing file,
// ~ expanded, not inside code, five deep at most, cycles refused.
func TestInstructionImports(t *testing.T) {
	userConfig(t, "")
	home := t.TempDir()
	t.Setenv("HOME", home)
	ws := t.TempDir()
	writeFile(t, filepath.Join(home, "mine.md"), "MINE")
	if err := os.MkdirAll(filepath.Join(ws, "docs", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, ClaudeFile), "See @docs/style.md and @~/mine.md, mail me@example.com.\n"+
		"Not `@docs/code.md` nor\n```\n@docs/fenced.md\n```\n")
	writeFile(t, filepath.Join(ws, "docs", "style.md"), "STYLE @deep/a.md @../CLAUDE.md") // the cycle back is refused
	writeFile(t, filepath.Join(ws, "docs", "code.md"), "CODE")
	writeFile(t, filepath.Join(ws, "docs", "fenced.md"), "FENCED")
	// a.md imports b.md ... : CLAUDE.md is depth 0, style.md 1, a.md 2, ... f.md 6.
	chain := []string{"a", "b", "c", "d", "e", "f"}
	for i, n := range chain {
		text := strings.ToUpper(n) + "-TEXT"
		if i+1 < len(chain) {
			text += " @" + chain[i+1] + ".md"
		}
		writeFile(t, filepath.Join(ws, "docs", "deep", n+".md"), text)
	}
	p := InstructionsPrompt(Instructions(ws))
	for _, w := range []string{"STYLE", "MINE", "A-TEXT", "D-TEXT", `imported_by="` + filepath.Join(ws, ClaudeFile) + `"`} {
		if !strings.Contains(p, w) {
			t.Errorf("prompt lacks %q:\n%s", w, p)
		}
	}
	for _, w := range []string{"CODE", "FENCED", "E-TEXT", "F-TEXT"} {
		if strings.Contains(p, w) {
			t.Errorf("prompt has %q (code, or deeper than 5 imports):\n%s", w, p)
		}
	}
	if n := strings.Count(p, "See @docs/style.md"); n != 1 {
		t.Errorf("CLAUDE.md appears %d times: the cycle was followed", n)
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
