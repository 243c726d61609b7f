package sqlite

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flower-run/flower/store"
)

func TestSweepBuilds(t *testing.T) { // issue 22 item 5
	dir := t.TempDir()
	path := filepath.Join(dir, "sessions.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{"sessions.db.new-123", "sessions.db.new-123-wal", "sessions.db.new-9-journal", "other.db.new-1"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if gone := SweepBuilds(path); !slices.Equal(gone, []string{"sessions.db.new-123"}) {
		t.Errorf("swept %v", gone)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	for _, want := range []string{"sessions.db", "other.db.new-1"} {
		if !slices.Contains(left, want) {
			t.Errorf("%s was removed: %v", want, left)
		}
	}
	for _, name := range left {
		if name != "other.db.new-1" && len(name) > len("sessions.db.new") && name[:len("sessions.db.new")] == "sessions.db.new" {
			t.Errorf("%s left", name)
		}
	}
	if err := s.Commit(t.Context(), store.Batch{Wake: "/w"}); err != nil {
		t.Errorf("the store after the sweep: %v", err)
	}
}
