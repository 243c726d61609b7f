// Package atomicfile replaces files so that a reader, or a process started
// after a crash at any instant, sees the old content or the new, never a
// mix (DESIGN.md §3.3): write a temporary file beside the target, fsync it,
// rename it over the target, fsync the directory.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flower-run/flower/internal/failpoint"
)

// WriteFile atomically replaces path with data, with the given mode.
func WriteFile(path string, data []byte, mode fs.FileMode) error {
	return replace(path, data, mode, true)
}

// WriteFileUnsynced replaces path with data as WriteFile does, but without
// an fsync: a reader never sees half a file, yet after a crash of the
// machine the file may be missing, empty or torn. It is for derived data
// only, which the caller checks and writes again from the store (the spill
// files of trimmed results); never for a file that is the only copy.
func WriteFileUnsynced(path string, data []byte, mode fs.FileMode) error {
	return replace(path, data, mode, false)
}

// replace writes a temp file beside path and renames it over path, with
// the fsyncs that make it durable when sync is set.
func replace(path string, data []byte, mode fs.FileMode, sync bool) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("create temp file: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write temp file: %w", err)
	}
	// CreateTemp makes the file 0600; set the mode before it becomes visible.
	if err = f.Chmod(mode); err != nil {
		return fmt.Errorf("chmod temp file: %w", err)
	}
	if sync {
		if err = f.Sync(); err != nil {
			return fmt.Errorf("sync temp file: %w", err)
		}
		failpoint.Durable("fsync " + filepath.Base(path) + " (temp)")
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close temp file: %w", err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename temp file: %w", err)
	}
	if !sync {
		return nil
	}
	failpoint.Durable("rename " + filepath.Base(path))
	if err = SyncDir(dir); err != nil {
		return err
	}
	failpoint.Durable("fsync dir of " + filepath.Base(path))
	return nil
}

// SyncDir makes a rename or a creation in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir: %w", err)
	}
	return nil
}
