package flower_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/project"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/workflow"
)

// TestDoctor: on sound state every finding is fine; a mark the store
// falls short of, a temp file a killed write left and a project moved
// here each give one finding that is not, with its fix (issue 22 item 2).
func TestDoctor(t *testing.T) {
	ctx := context.Background()
	state, parent := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	ws := filepath.Join(parent, "a")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	runDir, err := flower.DefaultRunDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(filepath.Join(runDir, flower.StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := s.Commit(ctx, store.Batch{Run: &store.Run{ID: "r1", Workspace: ws, Status: store.RunFinished, Created: now, Updated: now}}); err != nil {
		t.Fatal(err)
	}
	saveMark(t, s, runDir, ws)
	s.Close()
	if _, err := project.IndexIn(state).Keep(ws, runDir); err != nil {
		t.Fatal(err)
	}
	for _, f := range flower.Doctor(ctx, ws, runDir, "") {
		if !f.OK {
			t.Errorf("sound state: %+v", f)
		}
	}

	mark := filepath.Join(runDir, workflow.MarkFile)
	data, err := os.ReadFile(mark)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mark, []byte(strings.Replace(string(data), `"r1"`, `"r1", "r0"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, ".manifest.json.77.tmp"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(ws, ".flower", "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, ".brief.md.5.tmp"), []byte("#"), 0o600); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(parent, "b")
	if err := os.Rename(ws, moved); err != nil {
		t.Fatal(err)
	}
	byPath, err := flower.DefaultRunDir(moved) // the new path's: the move is not adopted yet
	if err != nil || byPath == runDir {
		t.Fatalf("DefaultRunDir of the moved project = %q, %v; want the new path's own", byPath, err)
	}
	got := map[string]flower.Finding{}
	for _, f := range flower.Doctor(ctx, moved, byPath, "") {
		got[f.Check] = f
	}
	for check, want := range map[string]string{
		"high-water": "run r0", "temp files": ".manifest.json.77.tmp", "project id": "moved here from " + ws,
		"temp files ": filepath.Join("notes", ".brief.md.5.tmp"),
	} {
		if f := got[strings.TrimSpace(check)]; f.OK || !strings.Contains(f.Text, want) || f.Fix == "" {
			t.Errorf("%s: %+v; want a problem naming %q, with a fix", check, f, want)
		}
	}
	if f := got["quick_check"]; !f.OK {
		t.Errorf("quick_check of a sound file: %+v", f)
	}
}

// saveMark writes the run dir's high-water mark of ws as an export does.
func saveMark(t *testing.T, s store.Store, runDir, ws string) {
	t.Helper()
	if err := workflow.WriteMark(context.Background(), s, runDir, ws); err != nil {
		t.Fatal(err)
	}
}
