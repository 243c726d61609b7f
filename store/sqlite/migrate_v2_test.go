package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// testdata/v2.db is a real version-2 store: the sessions.db of one run of
// the flower of schema 2 (commit 462fb25) with the offline demo model,
// `flower --model demo --timeout 0 "write a greeting file"`, checkpointed
// into the one file.
const v2Workspace = "/tmp/flower-v2-ws.ZtK2ZG"

// TestMigrateV2: opening a version-2 store adds the event log (version 3)
// in one transaction: entries and run state stay as they were, the schema
// is a new store's, and the store then keeps events.
func TestMigrateV2(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("testdata", "v2.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sessions.db")
	writeFile(t, path, data)
	if got := userVersion(t, path); got != "2" {
		t.Fatalf("fixture user_version = %s, want 2", got)
	}
	before := rawEntries(t, path)
	beforeRuns := rawQuery(t, path, `SELECT seq, id, body FROM runs ORDER BY seq`)
	if len(beforeRuns) != 1 || len(before) == 0 {
		t.Fatalf("fixture holds %d runs and %d sessions; want 1 run and its sessions", len(beforeRuns), len(before))
	}

	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatalf("Open of a version-2 store: %v", err)
	}
	runs, err := db.Runs(ctx, v2Workspace)
	if err != nil || len(runs) != 1 || runs[0].Status != store.RunFinished {
		t.Fatalf("Runs after the upgrade = %+v, %v; want the fixture's finished run", runs, err)
	}
	if n, err := db.LastEvent(ctx, runs[0].ID); err != nil || n != 0 {
		t.Errorf("LastEvent of an upgraded store = %d, %v; want 0", n, err)
	}
	ev := store.Event{Stream: runs[0].ID, Seq: 1, Kind: "step", Body: []byte(`{"kind":"step"}`)}
	if err := db.AppendEvents(ctx, ev); err != nil {
		t.Fatalf("AppendEvents after the upgrade: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := userVersion(t, path), fmt.Sprint(store.SchemaVersion); got != want {
		t.Errorf("upgraded user_version = %s, want %s", got, want)
	}
	fresh := filepath.Join(t.TempDir(), "sessions.db")
	open(t, fresh).Close()
	if d := cmp.Diff(schemaOf(t, fresh), schemaOf(t, path)); d != "" {
		t.Errorf("an upgraded store's schema differs from a new store's (-new +upgraded):\n%s", d)
	}
	if d := cmp.Diff(before, rawEntries(t, path), bodyOpts); d != "" {
		t.Errorf("entries changed (-before +after):\n%s", d)
	}
	if d := cmp.Diff(beforeRuns, rawQuery(t, path, `SELECT seq, id, body FROM runs ORDER BY seq`)); d != "" {
		t.Errorf("runs changed (-before +after):\n%s", d)
	}
	if got := rawQuery(t, path, `SELECT stream, seq, kind FROM events`); len(got) != 1 {
		t.Errorf("events after one append = %v", got)
	}
}

// TestMigrateV2Atomic: an upgrade from version 2 that fails leaves the file
// at version 2, whole, and a later Open upgrades it.
func TestMigrateV2Atomic(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v2.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sessions.db")
	writeFile(t, path, data)
	rawExec(t, path, "CREATE TABLE events (x INTEGER)")
	if db, err := sqlite.Open(path); err == nil {
		db.Close()
		t.Fatal("Open = nil error, want the failed upgrade's")
	}
	if got := userVersion(t, path); got != "2" {
		t.Errorf("user_version after a failed upgrade = %s, want 2", got)
	}
	rawExec(t, path, "DROP TABLE events")
	open(t, path).Close()
	if got := userVersion(t, path); got != fmt.Sprint(store.SchemaVersion) {
		t.Errorf("user_version after the retry = %s", got)
	}
}
