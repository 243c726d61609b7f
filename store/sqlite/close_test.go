package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flower-run/flower/store"
)

// TestCloseLeavesTheWAL: Close does not checkpoint (doc.go, "Closing a
// store"): the database file keeps its size, the WAL keeps the commits,
// and the next Open reads them from it, events written through the
// second pool included.
func TestCloseLeavesTheWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	db := open(t, path)
	before := fileSize(t, path)
	appendAll(t, db, notes("k", 0, 5)...)
	ev := store.Event{Stream: "s", Seq: 1, Kind: "text", Body: []byte(`{}`)}
	if err := db.AppendEvents(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if after := fileSize(t, path); after != before {
		t.Errorf("sessions.db grew from %d to %d bytes on Close: it was checkpointed", before, after)
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("no WAL after Close: %v", err)
	}
	db = open(t, path)
	if got := load(t, db, "k"); len(got) != 5 {
		t.Errorf("%d entries after reopening, want 5", len(got))
	}
	if got, err := db.EventsAfter(context.Background(), "s", 0, 0); err != nil || len(got) != 1 {
		t.Errorf("events after reopening: %v, %v; want 1", got, err)
	}
}
