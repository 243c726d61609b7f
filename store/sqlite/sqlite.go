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
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/flower-run/flower/store"
)

var _ store.Store = (*DB)(nil)

// pragmas run on every new connection of the pool: journal_mode, synchronous
// and busy_timeout are per connection, so setting them once on one
// connection would leave the others with SQLite's defaults (synchronous
// NORMAL in WAL mode loses the last commits on power failure).
var pragmas = []string{
	"busy_timeout(5000)",
	"journal_mode(WAL)",
	"synchronous(FULL)",
	"foreign_keys(1)",
	// Reads map the file instead of copying each page out with a read
	// call: loading a long session is mostly reading pages (see doc.go).
	"mmap_size(1073741824)",
}

// DB is a session store in one SQLite file. It is safe for concurrent use,
// also by several processes on one file.
type DB struct {
	path string
	db   *sql.DB

	// wmu serializes this handle's write transactions, so that goroutines of
	// one process queue on a mutex instead of sleeping in SQLite's busy
	// handler. Other processes are still kept out by SQLite's own lock.
	wmu sync.Mutex

	stmts statements // prepared once, reused on the hot path

	// ev writes the event log without an fsync of its own (events.go).
	ev *sql.DB
}

// Open opens the store at path, creating the file (mode 0600) and its parent
// directory if they are missing. A file that is not a session store is
// refused with an error wrapping store.ErrNotStore; a store of another
// schema version with one wrapping store.ErrSchema.
func Open(path string) (*DB, error) {
	created, err := create(context.Background(), path)
	if err != nil {
		return nil, err
	}
	if !created { // a file that was there: check it before the pool changes it
		if err := createFile(path); err != nil {
			return nil, err
		}
		if _, err := probe(context.Background(), path); err != nil {
			return nil, openError(path, err)
		}
	}
	q := url.Values{"_pragma": pragmas, "_txlock": {"immediate"}}
	db, err := sql.Open("sqlite", fileURI(path, q))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Keep a few idle connections: a closed connection takes its prepared
	// statements with it.
	db.SetMaxIdleConns(4)
	d := &DB{path: path, db: db, ev: openEvents(path)}
	if err := d.init(context.Background()); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// init checks or creates the schema and prepares the statements.
func (d *DB) init(ctx context.Context) error {
	if err := d.db.PingContext(ctx); err != nil {
		return openError(d.path, err)
	}
	if err := d.migrate(ctx); err != nil {
		return openError(d.path, err)
	}
	if err := d.stmts.prepare(ctx, d.db); err != nil {
		return fmt.Errorf("open %s: %w", d.path, err)
	}
	return nil
}

// createFile creates path with mode 0600 before SQLite sees it: SQLite would
// create it 0644, and it gives the -wal and -shm files the mode of the
// database file, so this one call keeps all three private. A file that
// exists keeps its mode.
func createFile(path string) error {
	dir := filepath.Dir(path)
	if err := mkdirSynced(dir); err != nil {
		return fmt.Errorf("create store directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create store: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create store: %w", err)
	}
	// The file's name is durable only once its directory is synced.
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("create store: %w", err)
	}
	return nil
}

// mkdirSynced creates dir and its missing parents (0700: the run dir holds
// transcripts), syncing each new directory's parent so that the path
// survives a power loss.
func mkdirSynced(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		missing = append(missing, d)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := syncDir(filepath.Dir(missing[i])); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// fileURI is the driver's name for path with parameters q: a file: URI, so
// that a path holding '?', '#' or '%' reaches SQLite intact (the driver
// cuts a plain name at its first '?').
func fileURI(path string, q url.Values) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	if u.Path != "" && u.Path[0] != '/' {
		u.Path = "/" + u.Path // a Windows volume: file:///C:/...
	}
	return u.String()
}

// Close closes the store. Closing twice is harmless.
func (d *DB) Close() error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	return errors.Join(d.stmts.close(), d.db.Close(), d.ev.Close())
}
