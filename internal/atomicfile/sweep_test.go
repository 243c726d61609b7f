package atomicfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSweep(t *testing.T) { // issue 22 item 5
	dir := t.TempDir()
	left := []string{".manifest.json.123456.tmp", ".brief.md.9.tmp"}
	kept := []string{"manifest.json", "notes.tmp", ".x.tmp", ".a.b.tmp", "a.1.tmp"}
	for _, name := range append(slices.Clone(left), kept...) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteFile(filepath.Join(dir, "lineage.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	gone := Sweep(dir)
	slices.Sort(gone)
	slices.Sort(left)
	if !slices.Equal(gone, left) {
		t.Errorf("swept %v, want %v", gone, left)
	}
	for _, name := range append(kept, "lineage.json") {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
