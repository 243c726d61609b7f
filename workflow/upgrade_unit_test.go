package workflow

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/mem"
)

// TestStrayStateFileNeverOverwritesTheStore: a state.json appearing in a
// run dir already upgraded (restored from a backup, say) imports nothing
// the store has: its rows keep their costs, its lineage its sessions.
func TestStrayStateFileNeverOverwritesTheStore(t *testing.T) { // issue 9
	ctx, s, dir, ws := context.Background(), mem.New(), t.TempDir(), "/ws"
	row := store.StepResult{Run: "20261201-100000-aaaaaa", Step: "work", OK: true, CostUSD: 1.25, NumTurns: 7}
	run := store.Run{ID: row.Run, Workspace: ws, Status: store.RunFinished, Outcome: "passed"}
	if err := s.Commit(ctx, store.Batch{Run: &run, Results: []store.StepResult{row},
		Bind: []store.Binding{{Workspace: ws, Step: "work", Session: "s-now"}}}); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(v1StateFile, `{"run":"20261201-100000-aaaaaa","status":"running","done":{},"step":"work"}`)
	write(LineageFile, `{"workspace":"/ws","woke":1,"steps":{"work":"s-old"}}`)
	write(ManifestFile, `[{"run":"20261201-100000-aaaaaa","step":"work","ok":false}]`)
	if _, err := Upgrade(ctx, s, dir, ws); err != nil {
		t.Fatal(err)
	}
	got, _, _ := s.Run(ctx, run.ID)
	rows, _ := s.Results(ctx, "")
	l, _ := s.Lineage(ctx, ws)
	if got.Status != store.RunFinished || len(rows) != 1 || rows[0].CostUSD != 1.25 || l.Steps["work"] != "s-now" {
		t.Errorf("after a stray import: run %s, rows %+v, lineage %v", got.Status, rows, l.Steps)
	}
}
