package starter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLaterStepsGetTheFrozenNotes: goals, work and the judge start with
// the content of the brief (and the goals), not only their paths (seed
// 000, issue 9 item 9).
func TestLaterStepsGetTheFrozenNotes(t *testing.T) {
	ws := t.TempDir()
	write := func(rel, text string) {
		if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := New(Options{Workspace: ws, Task: "a task", Model: "claude-sonnet-4-6"})
	// Read as each step starts: the brief is written after New, by clarify.
	write(BriefPath, "# Brief\n\n## Goal\n\nthe brief's own words\n")
	write(GoalsPath, "# Goals\n\n- [ ] the goals' own words\n")
	goals, work := w.Steps[1].Context(), w.Steps[2].Context()
	if !strings.Contains(goals, "the brief's own words") || strings.Contains(goals, "the goals' own words") {
		t.Errorf("goals step context:\n%s", goals)
	}
	for name, c := range map[string]string{"work": work, "judge": w.Judge.Context()} {
		if !strings.Contains(c, "the brief's own words") || !strings.Contains(c, "the goals' own words") {
			t.Errorf("%s context:\n%s", name, c)
		}
	}
	write(BriefPath, strings.Repeat("x", maxNote+10))
	if c := w.Steps[1].Context(); len(c) > maxNote+200 || !strings.Contains(c, "cut at 16 KiB") {
		t.Errorf("a huge brief reached the prompt whole (%d bytes)", len(c))
	}
}
