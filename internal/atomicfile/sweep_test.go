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

// TestSweepTree: the temp files of killed writes are swept in every
// directory under the workbench, not only at its top: the random-kill soak
// found .brief.md.N.tmp left in .flower/notes/ after a kill during the
// Write of the brief (issue 22 item 5).
func TestSweepTree(t *testing.T) { // issue 22 item 5
	dir := t.TempDir()
	for _, rel := range []string{".a.1.tmp", "notes/.brief.md.2633436649.tmp", "notes/brief.md", "notes/archive/x/.goals.md.7.tmp"} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gone := SweepTree(dir)
	slices.Sort(gone)
	want := []string{".a.1.tmp", filepath.Join("notes", ".brief.md.2633436649.tmp"), filepath.Join("notes", "archive", "x", ".goals.md.7.tmp")}
	if !slices.Equal(gone, want) {
		t.Errorf("swept %v, want %v", gone, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes", "brief.md")); err != nil {
		t.Errorf("brief.md: %v", err)
	}
}
