package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// TestStatsReadsOnlyWhatItShows: Stats (flower sessions) decodes the
// responses and the first prompt, never the tool results: with every
// tool result's body unreadable, Load fails and Stats still answers.
func TestStatsReadsOnlyWhatItShows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	db := open(t, path)
	ctx, now := context.Background(), time.Now()
	entries := []store.Entry{
		{UUID: "a", Key: "p/s", Kind: store.KindUser, Time: now, Message: &model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: "fix the bug\nin main.go"}}}},
		{UUID: "b", Parent: "a", Key: "p/s", Kind: store.KindAssistant, Time: now, Cost: 0.25,
			Message: &model.Message{Role: model.Assistant, Content: []model.Block{&model.Text{Text: "looking"}}}},
		{UUID: "c", Parent: "b", Key: "p/s", Kind: store.KindResult, Time: now, Op: &store.Op{ID: "t1", Tool: "Bash", Content: "big output"}},
	}
	if err := db.Append(ctx, entries...); err != nil {
		t.Fatal(err)
	}
	db.Close()
	rawExec(t, path, `UPDATE entries SET body = x'ff' WHERE kind = 'tool_result'`)
	db = open(t, path)
	defer db.Close()
	if _, err := db.Load(ctx, "p/s"); err == nil {
		t.Fatal("Load decoded a damaged row: the test damaged nothing")
	}
	got, err := store.ReadStats(ctx, db, "p/s")
	if err != nil {
		t.Fatalf("Stats: %v (it decoded a tool result)", err)
	}
	want := store.Stats{Entries: 3, LastSeq: 3, Turns: 1, Cost: 0.25, Prompt: "fix the bug\nin main.go"}
	if got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
}
