package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/model/modeltest"
)

// userFile writes a file under the user's config dir of a test whose HOME
// is dir (the harness sets HOME=dir; XDG_CONFIG_HOME is unset).
func userFile(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, ".config", "flower", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProjectInstructions: AGENTS.md and CLAUDE.md at the root (both,
// issue 21) and the user's own AGENTS.md reach every step's system prompt,
// the banner names them, and an edit reaches the next run (R10.2).
func TestProjectInstructions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	userFile(t, dir, "AGENTS.md", "USER-RULE: answer briefly\n")
	os.WriteFile(filepath.Join(dir, "CLAUDE.md"), []byte("CLAUDE-RULE: read beside AGENTS.md\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("PROJECT-RULE: run the tests\n"), 0o644)
	srv, env := fakeModel(t)
	r := runFlower(t, dir, env, args(testTask)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "instructions: ~/.config/flower/AGENTS.md, AGENTS.md, CLAUDE.md") {
		t.Errorf("the banner does not name the instruction files:\n%s", r.stdout)
	}
	reqs := srv.Requests()
	for _, step := range []string{"clarify", "goals", "work", "judge"} {
		if len(ofStep(reqs, step)) == 0 {
			t.Fatalf("no %s request", step)
		}
	}
	for _, req := range reqs {
		if !strings.Contains(req.System, "USER-RULE") || !strings.Contains(req.System, "PROJECT-RULE") || !strings.Contains(req.System, "CLAUDE-RULE") {
			t.Fatalf("request %d (%s) system prompt:\n%s", req.N, stepOf(req.System), req.System)
		}
	}

	// Re-read at each start: without AGENTS.md, CLAUDE.md alone applies.
	os.Remove(filepath.Join(dir, "AGENTS.md"))
	once := modeltest.NewAnthropic(modeltest.Script(modeltest.Turn{Text: "ok"}))
	defer once.Close()
	r = runFlower(t, dir, []string{"ANTHROPIC_BASE_URL=" + once.URL, "ANTHROPIC_API_KEY=test"}, "once", "hi")
	if r.code != 0 {
		t.Fatalf("once: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if sys := once.Requests()[0].System; !strings.Contains(sys, "CLAUDE-RULE") || strings.Contains(sys, "PROJECT-RULE") {
		t.Errorf("once after removing AGENTS.md, system prompt:\n%s", sys)
	}
}

// TestUserConfigDefaults: ~/.config/flower/config.yaml gives defaults,
// flower.yaml overrides them, the command line overrides both (R10.2).
func TestUserConfigDefaults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	userFile(t, dir, "config.yaml", "model: {name: demo}\nmax_turns: 1\n")
	// model.name: demo from the user's file: no API key needed; max_turns 1
	// stops the demo's four-turn script.
	r := runFlower(t, dir, nil, "once", "say hello")
	if r.code != 1 || !strings.Contains(r.stderr, "max turns") {
		t.Fatalf("user config max_turns 1: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	os.WriteFile(filepath.Join(dir, "flower.yaml"), []byte("max_turns: 10\n"), 0o644)
	personApproves(t, dir)
	if r = runFlower(t, dir, nil, "once", "say hello"); r.code != 0 {
		t.Fatalf("flower.yaml max_turns 10 over the user's 1: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r = runFlower(t, dir, nil, "once", "--max-turns", "1", "say hello"); r.code != 1 {
		t.Fatalf("--max-turns 1 over flower.yaml: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	userFile(t, dir, "config.yaml", "modle: demo\n")
	r = runFlower(t, dir, nil, "once", "x")
	if want := filepath.Join(dir, ".config", "flower", "config.yaml") + ":1:1: modle: unknown key"; r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Fatalf("a misspelt key in config.yaml: exit %d\n%s", r.code, r.stderr)
	}
}
