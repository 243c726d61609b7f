package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
)

// buildPragmas make the connection that builds a new store's file: no
// rollback journal and no sync, since no one else can see the file yet
// (see create).
var buildPragmas = []string{"journal_mode(OFF)", "synchronous(OFF)"}

// create makes a new store at path if there is no file there: it builds
// the whole store (every table, user_version, and WAL mode in the header)
// in a temporary file beside path, syncs that file once, links it to path
// (the first commit syncs the directory). path thus names either nothing
// or a complete store, and the creation costs one fsync (two when the
// directory is new) instead of seven: a journalled switch to WAL, a schema
// commit and two directory syncs (issue 12; doc.go, "Creating a store"). It reports false, with a
// nil error, when the file already existed or another process linked its
// store first; the caller then opens what is there. It also reports false
// when the file system cannot link (an error other than "exists"): the
// caller then creates the store in place, as before.
func create(ctx context.Context, path string) (bool, error) {
	dir := filepath.Dir(path)
	if err := mkdirSynced(dir); err != nil {
		return false, fmt.Errorf("create store directory: %w", err)
	}
	if _, err := os.Lstat(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return false, nil // there is a file (or Open will say why it cannot look)
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".new-*") // mode 0600: -wal and -shm inherit it
	if err != nil {
		return false, fmt.Errorf("create store: %w", err)
	}
	tmp := f.Name()
	defer removeBuild(tmp)
	if err := f.Close(); err != nil {
		return false, fmt.Errorf("create store: %w", err)
	}
	if err := build(ctx, tmp); err != nil {
		return false, fmt.Errorf("create store: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		return false, fmt.Errorf("create store: %w", err)
	}
	// No sync of dir here: the store's first commit syncs it (doc.go,
	// "Creating a store"), and until then the store holds nothing to lose.
	switch err := os.Link(tmp, path); {
	case errors.Is(err, fs.ErrExist):
		return false, nil // another process created it first: open theirs
	case err != nil:
		return false, nil // no hard links here: create in place
	}
	return true, nil
}

// build writes a new store into the empty file at tmp: the migrations and
// user_version in one transaction, then WAL mode, which is a bit in the
// file's header. Without a journal nothing here is synced; create syncs
// the finished file once.
func build(ctx context.Context, tmp string) error {
	db, err := sql.Open("sqlite", fileURI(tmp, url.Values{"_pragma": buildPragmas}))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := upgrade(ctx, tx, 0); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil {
		return err
	}
	if mode != "wal" {
		return fmt.Errorf("journal mode is %q, not wal", mode)
	}
	return db.Close()
}

// syncFile makes the contents of the file at path durable.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// removeBuild removes the temporary file of a build and whatever SQLite
// left beside it. A crash may leave them: they are never opened again.
func removeBuild(tmp string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(tmp + suffix)
	}
}
