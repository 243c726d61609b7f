package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// testdata/v1.db is a real version-1 store: the sessions.db of one run of
// the flower of schema 1 (commit d287179) with the offline demo model,
// `flower --model demo --timeout 0 "write a greeting file"`, made in the
// workspace v1Workspace. Its WAL is checkpointed: the file is the whole
// store.
const v1Workspace = "/tmp/flower-v1-ws.lgzw5J"

// v1Sessions are the sessions of testdata/v1.db: the agent of each and its
// number of entries.
var v1Sessions = map[string]int{"clarify": 5, "goals": 5, "work": 9, "judge": 7}

// copyV1 copies testdata/v1.db into a new directory, as a run dir's
// sessions.db.
func copyV1(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "v1.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(filepath.Join("testdata", "v1.db"+suffix)); err == nil {
			t.Fatalf("testdata/v1.db%s exists: the fixture must be a checkpointed file alone", suffix)
		}
	}
	path := filepath.Join(t.TempDir(), "sessions.db")
	writeFile(t, path, data)
	return path
}

// rawQuery runs query on path with a plain connection and returns the
// rows as strings.
func rawQuery(t *testing.T, path, query string) [][]string {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func userVersion(t *testing.T, path string) string {
	t.Helper()
	return rawQuery(t, path, "PRAGMA user_version")[0][0]
}

// schemaOf is the file's tables and indexes as SQLite keeps them.
func schemaOf(t *testing.T, path string) [][]string {
	t.Helper()
	return rawQuery(t, path, `SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name`)
}

// rawEntries decodes every entry of the file with a plain connection, by
// key: the entries as they were, without opening the file as a store.
func rawEntries(t *testing.T, path string) map[string][]store.Entry {
	t.Helper()
	out := map[string][]store.Entry{}
	for _, row := range rawQuery(t, path, `SELECT key, seq, CAST(body AS TEXT) FROM entries ORDER BY seq`) {
		var seq int64
		fmt.Sscan(row[1], &seq)
		e, err := sqlite.DecodeEntry(seq, row[2])
		if err != nil {
			t.Fatalf("decode seq %d: %v", seq, err)
		}
		out[row[0]] = append(out[row[0]], e)
	}
	return out
}

// TestMigrateV1: opening a version-1 store upgrades it to the current
// version: the sessions load as they were, the run state is empty, the
// tables are those of a new store, and a second Open changes nothing.
func TestMigrateV1(t *testing.T) {
	ctx := context.Background()
	path := copyV1(t)
	if got := userVersion(t, path); got != "1" {
		t.Fatalf("fixture user_version = %s, want 1", got)
	}
	before := rawEntries(t, path)

	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatalf("Open of a version-1 store: %v", err)
	}
	metas, err := db.Sessions(ctx, store.ProjectKey(v1Workspace)+"/")
	if err != nil {
		t.Fatal(err)
	}
	if len(metas) != len(v1Sessions) {
		t.Fatalf("%d sessions, want %d", len(metas), len(v1Sessions))
	}
	for _, m := range metas {
		got, err := db.Load(ctx, m.Key)
		if err != nil {
			t.Fatalf("Load(%s): %v", m.Key, err)
		}
		if len(got) != v1Sessions[m.Agent] || m.Workspace != v1Workspace {
			t.Errorf("%s (%s, workspace %s): %d entries, want %d", m.Key, m.Agent, m.Workspace, len(got), v1Sessions[m.Agent])
		}
		if d := cmp.Diff(before[m.Key], got, bodyOpts); d != "" {
			t.Errorf("%s changed with the upgrade (-before +after):\n%s", m.Key, d)
		}
		if got[0].Kind != store.KindUser || got[0].Parent != "" || got[len(got)-1].Kind != store.KindAssistant {
			t.Errorf("%s: first %s (parent %q), last %s; want a user prompt first and an answer last",
				m.Key, got[0].Kind, got[0].Parent, got[len(got)-1].Kind)
		}
		last, ok, err := db.Last(ctx, m.Key, store.KindAssistant)
		if err != nil || !ok || last.UUID != got[len(got)-1].UUID {
			t.Errorf("Last(%s) = %s, %v, %v; want %s", m.Key, last.UUID, ok, err, got[len(got)-1].UUID)
		}
	}
	checkNoRunState(t, db, v1Workspace)
	// The upgraded store takes run state.
	r := store.Run{ID: "r1", Workspace: v1Workspace, Status: store.RunInFlight}
	if err := db.Commit(ctx, store.Batch{Run: &r, Bind: []store.Binding{{Workspace: v1Workspace, Step: "clarify", Session: "s"}}}); err != nil {
		t.Fatalf("Commit after the upgrade: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	if got, want := userVersion(t, path), fmt.Sprint(store.SchemaVersion); got != want {
		t.Errorf("upgraded user_version = %s, want %s", got, want)
	}
	fresh := filepath.Join(t.TempDir(), "sessions.db")
	open(t, fresh).Close()
	upgraded := schemaOf(t, path)
	if d := cmp.Diff(schemaOf(t, fresh), upgraded); d != "" {
		t.Errorf("an upgraded store's schema differs from a new store's (-new +upgraded):\n%s", d)
	}

	// A second Open is a no-op: same version, same tables, same rows.
	db = open(t, path)
	if _, ok, err := db.Run(ctx, "r1"); !ok || err != nil {
		t.Errorf("Run after reopening the upgraded store: ok=%v err=%v", ok, err)
	}
	db.Close()
	if d := cmp.Diff(upgraded, schemaOf(t, path)); d != "" {
		t.Errorf("a second Open changed the schema (-first +second):\n%s", d)
	}
	if got := userVersion(t, path); got != fmt.Sprint(store.SchemaVersion) {
		t.Errorf("user_version after a second Open = %s", got)
	}
	if d := cmp.Diff(before, rawEntries(t, path), bodyOpts); d != "" {
		t.Errorf("entries changed (-before +after):\n%s", d)
	}
}

func checkNoRunState(t *testing.T, db *sqlite.DB, ws string) {
	t.Helper()
	ctx := context.Background()
	if runs, err := db.Runs(ctx, ""); len(runs) != 0 || err != nil {
		t.Errorf("Runs = %d, %v; want none", len(runs), err)
	}
	if l, err := db.Lineage(ctx, ws); err != nil || l.Thread != 0 || l.Woke != 0 || len(l.Steps) != 0 {
		t.Errorf("Lineage = %+v, %v; want empty", l, err)
	}
	if rs, err := db.Results(ctx, ""); len(rs) != 0 || err != nil {
		t.Errorf("Results = %d, %v; want none", len(rs), err)
	}
}

// TestMigrateConcurrent: processes opening one version-1 store at once
// upgrade it once; all of them then work on it.
func TestMigrateConcurrent(t *testing.T) {
	path := copyV1(t)
	const n = 6
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			db, err := sqlite.Open(path)
			if err != nil {
				errs <- err
				return
			}
			r := store.Run{ID: fmt.Sprint("r", i), Workspace: "/w", Status: store.RunInFlight}
			errs <- errors.Join(db.Commit(context.Background(), store.Batch{Run: &r, Entries: []store.Entry{note(r.ID, 0)}}), db.Close())
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Open and commit: %v", err)
		}
	}
	db := open(t, path)
	if runs, err := db.Runs(context.Background(), "/w"); len(runs) != n || err != nil {
		t.Errorf("Runs = %d, %v; want %d", len(runs), err, n)
	}
}

// TestMigrateAtomic: an upgrade that fails part way leaves the file at
// version 1 with none of the new tables, and an Open after the cause is
// gone upgrades it.
func TestMigrateAtomic(t *testing.T) {
	path := copyV1(t)
	// A table in the way of the upgrade's last CREATE TABLE.
	rawExec(t, path, "CREATE TABLE results (x INTEGER)")
	if db, err := sqlite.Open(path); err == nil {
		db.Close()
		t.Fatal("Open = nil error, want the failed upgrade's")
	} else if !strings.Contains(err.Error(), path) {
		t.Errorf("Open = %v, want an error naming %s", err, path)
	}
	if got := userVersion(t, path); got != "1" {
		t.Errorf("user_version after a failed upgrade = %s, want 1", got)
	}
	if got := rawQuery(t, path, `SELECT name FROM sqlite_master WHERE name IN ('runs', 'threads', 'bindings', 'entries_key_kind_seq')`); len(got) != 0 {
		t.Errorf("a failed upgrade left %v behind", got)
	}
	rawExec(t, path, "DROP TABLE results")
	db := open(t, path)
	checkNoRunState(t, db, v1Workspace)
}
