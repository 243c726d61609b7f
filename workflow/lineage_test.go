package workflow

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flower-run/flower/agent"
)

func TestLineageSaveLoad(t *testing.T) { // R3.2
	dir := t.TempDir()
	l, note := LoadLineage(dir, "/ws", nil)
	if note != "" || len(l.Steps) != 0 {
		t.Fatalf("fresh lineage: %+v %q", l, note)
	}
	l.Woke = 2
	if err := l.Set("work", "s-1"); err != nil {
		t.Fatal(err)
	}
	var onDisk map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, LineageFile))
	if err := json.Unmarshal(data, &onDisk); err != nil {
		t.Fatal(err)
	}
	if onDisk["workspace"] != "/ws" || onDisk["woke"] != 2.0 || onDisk["steps"].(map[string]any)["work"] != "s-1" {
		t.Fatalf("lineage.json = %s", data)
	}
	got, note := LoadLineage(dir, "/ws", func(string) bool { return true })
	if note != "" || got.Steps["work"] != "s-1" || got.Woke != 2 {
		t.Fatalf("reloaded %+v %q", got, note)
	}
}

func TestLineageValidationStartsFresh(t *testing.T) { // R3.3
	tests := []struct {
		name, content string
		has           bool
		note          string
	}{
		{"corrupt", `{"workspace":`, true, "not valid JSON"},
		{"other workspace", `{"workspace":"/other","woke":1,"steps":{"work":"s"}}`, true, "belongs to workspace /other"},
		{"missing session", `{"workspace":"/ws","woke":1,"steps":{"work":"gone"}}`, false, "not in the store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, LineageFile), []byte(tt.content), 0o644)
			l, note := LoadLineage(dir, "/ws", func(string) bool { return tt.has })
			if len(l.Steps) != 0 || l.Woke != 0 || !strings.Contains(note, tt.note) {
				t.Fatalf("got %+v, note %q; want fresh and a note with %q", l, note, tt.note)
			}
		})
	}
}

func TestLineageArchive(t *testing.T) { // R3.13
	dir := t.TempDir()
	brief := filepath.Join(dir, "brief.md")
	os.WriteFile(brief, []byte("# b"), 0o644)
	l, _ := LoadLineage(dir, "/ws", nil)
	l.Woke = 3
	l.Set("work", "s")
	into := filepath.Join(dir, "archive", "20261130-040000")
	if err := l.Archive(into, brief, filepath.Join(dir, "goals.md")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{LineageFile, "brief.md"} {
		if _, err := os.Stat(filepath.Join(into, name)); err != nil {
			t.Fatalf("%s not archived: %v", name, err)
		}
	}
	if len(l.Steps) != 0 || l.Woke != 0 {
		t.Fatalf("not zeroed: %+v", l)
	}
}

func TestManifestKeepsOtherRunsRows(t *testing.T) { // R3.4
	dir := t.TempDir()
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := NewManifest(dir, fmt.Sprintf("run-%d", r))
			for i := range 10 {
				res := agent.Result{SessionID: "s", OK: i%2 == 0, Start: time.Unix(0, 0), End: time.Unix(2, 0)}
				if err := m.Record(fmt.Sprintf("step%d", i%5), res); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	rows, err := ReadManifest(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 20 {
		t.Fatalf("%d rows, want 4 runs x 5 steps", len(rows))
	}
	for _, r := range rows {
		if r.DurationS != 2 || r.Run == "" || r.SessionID != "s" {
			t.Fatalf("row %+v", r)
		}
		if r.Step == "step4" && r.OK { // the latest state of step4 is i=9: not ok
			t.Fatalf("row not updated to its latest state: %+v", r)
		}
	}
}

func TestManifestKeepsRowsOfTheRunItFinishes(t *testing.T) { // R3.1, R3.4
	dir := t.TempDir()
	res := agent.Result{SessionID: "s", OK: true}
	if err := NewManifest(dir, "other").Record("work", res); err != nil {
		t.Fatal(err)
	}
	if err := NewManifest(dir, "cut").Record("clarify", res); err != nil {
		t.Fatal(err)
	}
	// The process that ran clarify died; the next one finishes run "cut".
	if err := NewManifest(dir, "cut").Record("goals", res); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadManifest(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Run+"/"+r.Step)
	}
	if strings.Join(got, " ") != "other/work cut/clarify cut/goals" {
		t.Fatalf("rows %v", got)
	}
}
