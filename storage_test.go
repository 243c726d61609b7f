package flower

import (
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

// TestStorageFix: a state dir that cannot be written or whose disk is full
// gets advice naming the directory and --run-dir / XDG_STATE_HOME, through
// any wrapping (issue 23).
func TestStorageFix(t *testing.T) {
	dir := t.TempDir()
	wrap := func(e error) error {
		return fmt.Errorf("lock run dir: %w", &fs.PathError{Op: "mkdir", Path: dir, Err: e})
	}
	for _, tt := range []struct {
		err  error
		want []string
	}{
		{wrap(syscall.EROFS), []string{dir, "not writable", "--run-dir", "XDG_STATE_HOME"}},
		{wrap(syscall.EACCES), []string{dir, "not writable"}},
		{wrap(syscall.ENOSPC), []string{dir, "is full (", "free)", "--run-dir"}},
		{fmt.Errorf("append entries: database or disk is full (13)"), []string{"is full", "XDG_STATE_HOME"}},
		{fmt.Errorf("write lineage: no space left on device"), []string{"is full", "--run-dir"}}, // its text only, as agent.Result.Error keeps it
		{wrap(syscall.ENOTDIR), []string{"a file stands where"}},
	} {
		got := StorageFix(tt.err, dir)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("StorageFix(%v) = %q: want %q in it", tt.err, got, w)
			}
		}
	}
	if got := StorageFix(fmt.Errorf("anthropic: 529"), dir); got != "" {
		t.Errorf("an unrelated error got advice %q", got)
	}
}
