package flower

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/workflow/starter"
)

// TestBanner: a wake's first line (R3.12) says where it starts, or what
// it continues: the cut run and where it stopped, the brief, the goals,
// the work step's context from the store, the wake's number (moved from
// cmd/flower, issue 19).
func TestBanner(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := Banner(ctx, s, ws, starter.State{}, nil); got != "-> starting in "+Tilde(ws) {
		t.Errorf("fresh: %q", got)
	}
	e := store.Entry{UUID: "u1", Key: store.SessionKey(ws, "w1"), Kind: store.KindAssistant, Time: time.Now(),
		Message: &model.Message{Role: "assistant"}, Usage: &model.Usage{Input: 80000, CacheRead: 200}}
	if err := s.Append(ctx, e); err != nil {
		t.Fatal(err)
	}
	st := starter.State{Waking: true, Checks: 3, Woke: 4, Steps: map[string]string{"work": "w1"}}
	got := Banner(ctx, s, ws, st, &store.Run{ID: "r1", Done: []string{"clarify"}})
	want := "<- continuing in " + Tilde(ws) + "  finishing run r1 at step 2 · brief confirmed · 3 goals · work context 80.2K · wake 5"
	if got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
	if got := Banner(ctx, s, ws, st, &store.Run{ID: "r1", Row: "judge"}); !strings.Contains(got, "finishing run r1 at judge") {
		t.Errorf("a cut row: %q", got)
	}
}

// TestInstructionsNote: the banner names the instruction files in force,
// the workspace's relative to it.
func TestInstructionsNote(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ws := t.TempDir()
	if got := InstructionsNote(ws); got != "" {
		t.Errorf("none: %q", got)
	}
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte("be brief\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := InstructionsNote(ws); got != "\n   instructions: AGENTS.md, CLAUDE.md" {
		t.Errorf("%q", got)
	}
}
