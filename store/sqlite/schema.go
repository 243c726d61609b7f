package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/flower-run/flower/store"
)

// schema is the on-disk format of SchemaVersion 1, drawn in doc.go.
// On-disk format: change only with a store.SchemaVersion bump.
var schema = []string{
	`CREATE TABLE entries (
		seq    INTEGER PRIMARY KEY AUTOINCREMENT,
		key    TEXT NOT NULL,
		uuid   TEXT NOT NULL UNIQUE,
		parent TEXT,
		kind   TEXT NOT NULL,
		time   TEXT NOT NULL,
		body   BLOB NOT NULL
	)`,
	`CREATE INDEX entries_key_seq ON entries(key, seq)`,
	`CREATE TABLE meta (
		key     TEXT PRIMARY KEY,
		created TEXT NOT NULL,
		updated TEXT NOT NULL,
		body    TEXT NOT NULL
	)`,
	`CREATE TABLE summaries (
		id   INTEGER PRIMARY KEY AUTOINCREMENT,
		key  TEXT NOT NULL,
		text TEXT NOT NULL,
		time TEXT NOT NULL
	)`,
	`CREATE INDEX summaries_key_id ON summaries(key, id)`,
	fmt.Sprintf(`PRAGMA user_version = %d`, store.SchemaVersion),
}

// tables are the tables a store of SchemaVersion has.
var tables = []string{"entries", "meta", "summaries"}

// probe checks the file before the pool opens it. The pool's connections
// switch the file to WAL mode as they connect, a lasting change that
// another program's database must not get; this connection changes
// nothing, it only reads.
func probe(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", fileURI(path, url.Values{"_pragma": {"busy_timeout(5000)"}}))
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	_, err = checkSchema(ctx, tx, path)
	return err
}

// migrate creates the schema in an empty file, or checks an existing one.
// It runs in a write transaction so that two processes opening a new file
// at once do not both create it: the second waits, then sees version 1.
func (d *DB) migrate(ctx context.Context) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	empty, err := checkSchema(ctx, tx, d.path)
	if err != nil || !empty {
		return err
	}
	if err := create(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

// checkSchema reads the version and tables of the file: a store of ours
// passes, an empty file passes as empty, anything else is refused.
func checkSchema(ctx context.Context, tx *sql.Tx, path string) (empty bool, err error) {
	var version int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return false, err
	}
	have, err := tableNames(ctx, tx)
	if err != nil {
		return false, err
	}
	switch {
	case version == 0 && len(have) == 0:
		return true, nil
	case version == 0:
		return false, &notStoreError{path: path, why: "it holds tables of another program"}
	case version != store.SchemaVersion:
		return false, &schemaError{path: path, version: version}
	}
	return false, checkTables(path, have)
}

func create(ctx context.Context, tx *sql.Tx) error {
	for _, stmt := range schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	return nil
}

// tableNames lists the tables in the file, SQLite's own excepted.
func tableNames(ctx context.Context, tx *sql.Tx) (map[string]bool, error) {
	rows, err := tx.QueryContext(ctx,
		`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		have[name] = true
	}
	return have, rows.Err()
}

// checkTables refuses a file that claims our version but lacks a table:
// another program's database that happens to use user_version.
func checkTables(path string, have map[string]bool) error {
	for _, name := range tables {
		if !have[name] {
			return &notStoreError{path: path, why: "table " + name + " is missing"}
		}
	}
	return nil
}

// openError names the file in an error of Open and turns SQLite's "not a
// database" and "malformed" into store.ErrNotStore.
func openError(path string, err error) error {
	var se *schemaError
	var ne *notStoreError
	switch {
	case errors.As(err, &se), errors.As(err, &ne):
		return err
	case isCode(err, sqlite3.SQLITE_NOTADB), isCode(err, sqlite3.SQLITE_CORRUPT):
		return &notStoreError{path: path, why: "it is not an SQLite database or is damaged", err: err}
	}
	return fmt.Errorf("open %s: %w", path, err)
}

// isCode reports whether err is an SQLite error with the primary result
// code code (extended codes carry it in their low byte).
func isCode(err error, code int) bool {
	return sqliteCode(err)&0xff == code
}

// sqliteCode is the extended result code of an SQLite error, 0 for another
// error.
func sqliteCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

// schemaError is a store written by another schema version (R5.6). Its text
// is the one line a person sees, so it names the file, both versions and
// the fix.
type schemaError struct {
	path    string
	version int
}

func (e *schemaError) Error() string {
	return fmt.Sprintf("%s: schema version %d, this flower reads %d: run \"flower --reset\" to start a new store",
		e.path, e.version, store.SchemaVersion)
}

func (e *schemaError) Unwrap() error { return store.ErrSchema }

// notStoreError is a file that is not a session store.
type notStoreError struct {
	path string
	why  string
	err  error // SQLite's error, if any
}

func (e *notStoreError) Error() string {
	return fmt.Sprintf("%s: not a flower session store: %s", e.path, e.why)
}

func (e *notStoreError) Unwrap() []error {
	if e.err == nil {
		return []error{store.ErrNotStore}
	}
	return []error{store.ErrNotStore, e.err}
}
