//go:build unix

package sqlite_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFileMode: the store and its -wal and -shm files are private (R8
// security) whatever the umask; with umask 0 SQLite alone would make them
// 0644.
func TestFileMode(t *testing.T) {
	defer syscall.Umask(syscall.Umask(0)) // process-wide: this test must not run in parallel
	path := filepath.Join(t.TempDir(), "runs", "sessions.db")
	db := open(t, path)
	appendAll(t, db, note("k", 0)) // the WAL and its index exist while the store is open
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(p), got)
		}
	}
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o700 {
		t.Errorf("created directory: mode %v, want 0700", got)
	}
}
