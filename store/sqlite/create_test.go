package sqlite_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/store"
)

// TestCreateBuildsBeside: a new store is built in a temporary file and
// linked into place (doc.go, "Creating a store"): the path holds a store of
// the current version already in WAL mode, and no temporary file stays.
func TestCreateBuildsBeside(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	path := filepath.Join(dir, "sessions.db")
	db := open(t, path)
	appendAll(t, db, note("k", 0))
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.Contains(n.Name(), ".new-") {
			t.Errorf("temporary file %s left beside the store", n.Name())
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Sys() != nil && nlink(fi) != 1 {
		t.Errorf("the store has %d links, want 1 (the temporary name is gone)", nlink(fi))
	}
	// The header says WAL (bytes 18 and 19 are 2) before any connection
	// of the pool switched it, and user_version is current.
	head := make([]byte, 100)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadAt(head, 0); err != nil {
		t.Fatal(err)
	}
	if head[18] != 2 || head[19] != 2 {
		t.Errorf("header version bytes %d %d, want 2 2 (WAL)", head[18], head[19])
	}
	if v := int(head[60])<<24 | int(head[61])<<16 | int(head[62])<<8 | int(head[63]); v != store.SchemaVersion {
		t.Errorf("user_version %d, want %d", v, store.SchemaVersion)
	}
}

// TestCreateOverEmptyFile: an empty file at the path (an older flower
// created it, then crashed before the schema) becomes a store in place.
func TestCreateOverEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	writeFile(t, path, nil)
	db := open(t, path)
	appendAll(t, db, note("k", 0))
	db.Close()
	if got := load(t, open(t, path), "k"); len(got) != 1 {
		t.Fatalf("%d entries, want 1", len(got))
	}
}
