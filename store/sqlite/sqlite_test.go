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
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		db, err := sqlite.Open(filepath.Join(t.TempDir(), "sessions.db"))
		if err != nil {
			t.Fatal(err)
		}
		return db // storetest.Run closes it
	})
}

// open opens the store at path and closes it when the test ends.
func open(t testing.TB, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// note is the n-th entry of key's chain.
func note(key string, n int) store.Entry {
	e := store.Entry{
		UUID: fmt.Sprintf("%s#%d", key, n),
		Key:  key,
		Kind: store.KindNote,
		Time: time.Date(2025, 1, 1, 0, 0, n, 0, time.UTC),
		Text: fmt.Sprintf("note %d", n),
	}
	if n > 0 {
		e.Parent = fmt.Sprintf("%s#%d", key, n-1)
	}
	return e
}

func notes(key string, first, n int) []store.Entry {
	out := make([]store.Entry, n)
	for i := range out {
		out[i] = note(key, first+i)
	}
	return out
}

func appendAll(t testing.TB, db *sqlite.DB, entries ...store.Entry) {
	t.Helper()
	if err := db.Append(context.Background(), entries...); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

func load(t testing.TB, db *sqlite.DB, key string) []store.Entry {
	t.Helper()
	got, err := db.Load(context.Background(), key)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return got
}

// uuids are the uuids of entries, in order: what tests about loss compare.
func uuids(entries []store.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.UUID
	}
	return out
}

func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs", "nested", "sessions.db") // parents created
	ctx := context.Background()
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	appendAll(t, db, notes("p/s", 0, 5)...)
	meta := store.Meta{Key: "p/s", Agent: "work", Created: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := db.PutMeta(ctx, meta); err != nil {
		t.Fatal(err)
	}
	if err := db.PutSummary(ctx, "p/s", "handoff"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	db = open(t, path)
	if got, want := uuids(load(t, db, "p/s")), uuids(notes("p/s", 0, 5)); !cmp.Equal(got, want) {
		t.Errorf("entries after reopen = %v, want %v", got, want)
	}
	if got, ok, err := db.Meta(ctx, "p/s"); err != nil || !ok || got.Agent != "work" {
		t.Errorf("Meta after reopen = %+v, %v, %v", got, ok, err)
	}
	if got, ok, err := db.Summary(ctx, "p/s"); err != nil || !ok || got != "handoff" {
		t.Errorf("Summary after reopen = %q, %v, %v", got, ok, err)
	}
	appendAll(t, db, note("p/s", 5))
	if got := load(t, db, "p/s"); len(got) != 6 || got[5].Seq <= got[4].Seq {
		t.Errorf("append after reopen: %d entries, seqs %d, %d", len(got), got[4].Seq, got[5].Seq)
	}
}

// TestPragmas checks that every connection of the pool, not just the
// first, has the settings durability depends on.
func TestPragmas(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "sessions.db"))
	raw := sqlite.RawDB(db)
	ctx := context.Background()
	var conns []*sql.Conn
	for range 3 { // hold three at once, so the pool opens three
		c, err := raw.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	want := map[string]string{
		"journal_mode": "wal", "synchronous": "2", "busy_timeout": "5000", "foreign_keys": "1",
		"user_version": fmt.Sprint(store.SchemaVersion), // of the file, the same on every connection
	}
	for i, c := range conns {
		for name, w := range want {
			var got string
			if err := c.QueryRowContext(ctx, "PRAGMA "+name).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != w {
				t.Errorf("conn %d: PRAGMA %s = %s, want %s", i, name, got, w)
			}
		}
	}
}

// TestSpecialPath: a path holding URI syntax reaches SQLite intact.
func TestSpecialPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a?b#c%20d e", "sessions.db")
	db := open(t, path)
	appendAll(t, db, note("k", 0))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("store not at its path: %v", err)
	}
}

// rawExec runs statements on path with a plain connection: how tests build
// files flower did not write.
func rawExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, s := range stmts {
		if _, err := raw.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestSchemaMismatch: a store of a version this flower does not know, the
// next one included, is refused with the versions and the fix.
func TestSchemaMismatch(t *testing.T) {
	for _, version := range []int{store.SchemaVersion + 1, 99, -1} {
		t.Run(fmt.Sprint(version), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sessions.db")
			db := open(t, path)
			appendAll(t, db, note("k", 0))
			db.Close()
			rawExec(t, path, fmt.Sprintf("PRAGMA user_version = %d", version))

			_, err := sqlite.Open(path)
			if !errors.Is(err, store.ErrSchema) {
				t.Fatalf("Open = %v, want ErrSchema", err)
			}
			want := fmt.Sprintf(`%s: schema version %d, this flower reads 3: run "flower --reset" to start a new store`, path, version)
			if got := err.Error(); got != want {
				t.Errorf("error text\n got %s\nwant %s", got, want)
			}
			if got := userVersion(t, path); got != fmt.Sprint(version) {
				t.Errorf("user_version after the refusal = %s, want %d untouched", got, version)
			}
		})
	}
}

func TestNotStore(t *testing.T) {
	tests := []struct {
		name  string
		build func(t *testing.T, path string)
	}{
		{"garbage", func(t *testing.T, path string) {
			writeFile(t, path, []byte(strings.Repeat("this is not a database\n", 300)))
		}},
		{"short garbage", func(t *testing.T, path string) { writeFile(t, path, []byte("hello")) }},
		{"sqlite header, garbage after", func(t *testing.T, path string) {
			writeFile(t, path, append([]byte("SQLite format 3\x00"), make([]byte, 200)...))
		}},
		{"another program's database", func(t *testing.T, path string) {
			rawExec(t, path, "CREATE TABLE users (id INTEGER)")
		}},
		{"version 1, a table missing", func(t *testing.T, path string) {
			rawExec(t, path, "CREATE TABLE entries (seq INTEGER)", "PRAGMA user_version = 1")
		}},
		{"version 2, a run table missing", func(t *testing.T, path string) {
			db, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			rawExec(t, path, "DROP TABLE bindings")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sessions.db")
			tt.build(t, path)
			db, err := sqlite.Open(path)
			if err == nil {
				db.Close()
				t.Fatal("Open = nil error, want ErrNotStore")
			}
			if !errors.Is(err, store.ErrNotStore) || !strings.Contains(err.Error(), path) {
				t.Errorf("Open = %v, want ErrNotStore naming %s", err, path)
			}
		})
	}
}

// TestForeignUntouched: refusing another program's database leaves it as
// it was, in its own journal mode, with no WAL beside it.
func TestForeignUntouched(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	rawExec(t, path, "CREATE TABLE users (id INTEGER)")
	if _, err := sqlite.Open(path); !errors.Is(err, store.ErrNotStore) {
		t.Fatalf("Open = %v, want ErrNotStore", err)
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a -wal file appeared beside the foreign database: %v", err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var mode string
	if err := raw.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "delete" {
		t.Errorf("journal_mode = %q, %v; want delete", mode, err)
	}
}

// TestConcurrentOpen: handles opening a new file at once, as two processes
// started together would, agree on one schema.
func TestConcurrentOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	const n = 6
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			db, err := sqlite.Open(path)
			if err == nil {
				err = errors.Join(db.Append(context.Background(), note(fmt.Sprint("k", i), 0)), db.Close())
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Open and append: %v", err)
		}
	}
	db := open(t, path)
	for i := range n {
		if got := load(t, db, fmt.Sprint("k", i)); len(got) != 1 {
			t.Errorf("k%d: %d entries, want 1", i, len(got))
		}
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptBody: a damaged row halts Load with the seq, never a panic.
func TestCorruptBody(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	db := open(t, path)
	appendAll(t, db, notes("k", 0, 3)...)
	good, err := sqlite.AppendBody(nil, &store.Entry{UUID: "x", Key: "k", Kind: store.KindNote})
	if err != nil {
		t.Fatal(err)
	}
	noKind, err := sqlite.AppendBody(nil, &store.Entry{UUID: "x", Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range [][]byte{
		{}, {2}, good[:len(good)-1], append(good, 0), noKind,
		[]byte(`{"uuid":"x","key":"k","kind":"note"}`), // JSON, not the body format
	} {
		rawExec(t, path, fmt.Sprintf("UPDATE entries SET body = X'%x' WHERE seq = 2", body))
		_, err := db.Load(context.Background(), "k")
		if err == nil || !strings.Contains(err.Error(), "seq 2") {
			t.Errorf("body %q: Load = %v, want an error naming seq 2", body, err)
		}
	}
}

func TestAppendKeepsCallerSeq(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "sessions.db"))
	e := note("k", 0)
	e.Seq = 999 // a caller's stale value is ignored: the store assigns seq
	appendAll(t, db, e)
	if got := load(t, db, "k"); got[0].Seq == 999 {
		t.Errorf("seq = %d, the caller's value", got[0].Seq)
	}
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct {
		prefix, want string
		ok           bool
	}{
		{"", "", false},
		{"a", "b", true},
		{"a/b", "a/c", true},
		{"a\xff", "b", true},
		{"a\xff\xff", "b", true},
		{"\xff", "", false},
		{"-w-a/", "-w-a0", true},
	}
	for _, tt := range tests {
		got, ok := sqlite.PrefixEnd(tt.prefix)
		if got != tt.want || ok != tt.ok {
			t.Errorf("prefixEnd(%q) = %q, %v; want %q, %v", tt.prefix, got, ok, tt.want, tt.ok)
		}
	}
}
