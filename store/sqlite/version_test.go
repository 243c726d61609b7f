package sqlite_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// TestVersionChangesNothing: Version tells an older store, an empty file
// and a current store apart without upgrading or creating anything, so
// that flower ps and status can leave an older flower's store alone.
func TestVersionChangesNothing(t *testing.T) {
	v1 := copyV1(t)
	before, err := os.ReadFile(v1)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := sqlite.Version(v1); err != nil || v != 1 {
		t.Errorf("Version(v1.db) = %d, %v; want 1", v, err)
	}
	if after, _ := os.ReadFile(v1); !bytes.Equal(before, after) {
		t.Error("Version changed the v1 store")
	}

	empty := filepath.Join(t.TempDir(), "sessions.db")
	writeFile(t, empty, nil)
	if v, err := sqlite.Version(empty); err != nil || v != 0 {
		t.Errorf("Version(empty file) = %d, %v; want 0", v, err)
	}

	current := filepath.Join(t.TempDir(), "sessions.db")
	db, err := sqlite.Open(current)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if v, err := sqlite.Version(current); err != nil || v != store.SchemaVersion {
		t.Errorf("Version(new store) = %d, %v; want %d", v, err, store.SchemaVersion)
	}

	missing := filepath.Join(t.TempDir(), "none.db")
	if _, err := sqlite.Version(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Version(missing) = %v, want not exist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Error("Version created the file")
	}

	other := filepath.Join(t.TempDir(), "other.db")
	writeFile(t, other, []byte("this is not sqlite at all, not even close....."))
	if _, err := sqlite.Version(other); !errors.Is(err, store.ErrNotStore) {
		t.Errorf("Version(not a store) = %v, want ErrNotStore", err)
	}
}
