package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileReplacesAndLeavesNoTemp(t *testing.T) {
	for name, write := range map[string]func(string, []byte, os.FileMode) error{"synced": WriteFile, "unsynced": WriteFileUnsynced} {
		t.Run(name, func(t *testing.T) { testReplaces(t, write) })
	}
}

func testReplaces(t *testing.T, write func(string, []byte, os.FileMode) error) {
	dir := t.TempDir()
	p := filepath.Join(dir, "lineage.json")
	for _, content := range []string{"old", "new"} {
		if err := write(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != "new" {
		t.Fatalf("content = %q, %v", got, err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode = %v", fi.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("dir holds %d files, want 1 (a temp file was left)", len(entries))
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	if err := WriteFile(filepath.Join(t.TempDir(), "no", "x"), nil, 0o644); err == nil {
		t.Fatal("want an error for a missing directory")
	}
}
