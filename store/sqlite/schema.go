package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/flower-run/flower/store"
)

// migrations build the on-disk format drawn in doc.go: migrations[v] takes
// a store of version v to version v+1, so an empty file runs them all and
// a version-1 file the ones after it. A new store and an upgraded one thus
// get the very same tables.
// On-disk format: change only with a store.SchemaVersion bump, by adding a
// migration; never edit one that has shipped.
var migrations = [][]string{
	// 0 -> 1: sessions.
	{
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
	},
	// 1 -> 2: run state, lineage and manifest rows in the store (issue 9),
	// and an index that lets Last seek a session's newest entry of a kind
	// instead of scanning the session backwards (issue 12).
	{
		`CREATE TABLE runs (
		seq       INTEGER PRIMARY KEY AUTOINCREMENT,
		id        TEXT NOT NULL UNIQUE,
		workspace TEXT NOT NULL,
		status    TEXT NOT NULL,
		created   TEXT NOT NULL,
		updated   TEXT NOT NULL,
		body      TEXT NOT NULL
	)`,
		`CREATE INDEX runs_workspace_seq ON runs(workspace, seq)`,
		`CREATE TABLE threads (
		workspace TEXT PRIMARY KEY,
		thread    INTEGER NOT NULL,
		woke      INTEGER NOT NULL
	)`,
		`CREATE TABLE bindings (
		seq       INTEGER PRIMARY KEY AUTOINCREMENT,
		workspace TEXT NOT NULL,
		thread    INTEGER NOT NULL,
		step      TEXT NOT NULL,
		session   TEXT NOT NULL,
		time      TEXT NOT NULL
	)`,
		`CREATE INDEX bindings_workspace_thread_seq ON bindings(workspace, thread, seq)`,
		`CREATE TABLE results (
		seq  INTEGER PRIMARY KEY AUTOINCREMENT,
		run  TEXT NOT NULL,
		step TEXT NOT NULL,
		body TEXT NOT NULL,
		UNIQUE (run, step)
	)`,
		`CREATE INDEX results_run_seq ON results(run, seq)`,
		`CREATE INDEX entries_key_kind_seq ON entries(key, kind, seq)`,
	},
	// 2 -> 3: the event log, so a UI resumes a stream after a restart
	// (issue 14). Keyed by (stream, seq): no rowid, the key is the order.
	{
		`CREATE TABLE events (
		stream TEXT NOT NULL,
		seq    INTEGER NOT NULL,
		kind   TEXT NOT NULL,
		time   TEXT NOT NULL,
		body   TEXT NOT NULL,
		PRIMARY KEY (stream, seq)
	) WITHOUT ROWID`,
	},
}

// tables[v] are the tables a store of version v has.
var tables = [][]string{
	nil,
	{"entries", "meta", "summaries"},
	{"entries", "meta", "summaries", "runs", "threads", "bindings", "results"},
	{"entries", "meta", "summaries", "runs", "threads", "bindings", "results", "events"},
}

// probe checks the file before the pool opens it. The pool's connections
// switch the file to WAL mode as they connect, a lasting change that
// another program's database must not get; this connection changes
// nothing, it only reads: an old store is upgraded later, by migrate.
func probe(ctx context.Context, path string) (version int, err error) {
	db, err := sql.Open("sqlite", fileURI(path, url.Values{"_pragma": {"busy_timeout(5000)"}}))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	return checkSchema(ctx, tx, path)
}

// Version reads the schema version of the store at path and changes
// nothing: 0 for an empty file, less than store.SchemaVersion for a store
// Open would upgrade. Read-only commands use it to leave such a file
// alone. A file that is not a store is refused as by Open.
func Version(path string) (int, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, err
	}
	v, err := probe(context.Background(), path)
	if err != nil {
		return 0, openError(path, err)
	}
	return v, nil
}

// migrate creates the schema in an empty file, upgrades a store of an
// older version, or checks a current one. It runs in a write transaction,
// the version check included, so that two processes opening a new or an
// old file at once do not both create or upgrade it: the second waits for
// the first's commit, then finds the current version. An upgrade writes
// its tables and the new user_version in that one transaction, so a crash
// leaves the file at the old version or the new one, never between.
func (d *DB) migrate(ctx context.Context) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	version, err := checkSchema(ctx, tx, d.path)
	if err != nil || version == store.SchemaVersion {
		return err
	}
	if err := upgrade(ctx, tx, version); err != nil {
		return err
	}
	return tx.Commit()
}

// checkSchema reads the version and tables of the file: a store of ours,
// of this version or an older one, passes with its version; an empty file
// passes as version 0; anything else is refused.
func checkSchema(ctx context.Context, tx *sql.Tx, path string) (version int, err error) {
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return 0, err
	}
	have, err := tableNames(ctx, tx)
	if err != nil {
		return 0, err
	}
	switch {
	case version == 0 && len(have) == 0:
		return 0, nil
	case version == 0:
		return 0, &notStoreError{path: path, why: "it holds tables of another program"}
	case version < 0 || version > store.SchemaVersion:
		return 0, &schemaError{path: path, version: version}
	}
	return version, checkTables(path, version, have)
}

// upgrade runs the migrations from version on and records the new version
// in the same transaction.
func upgrade(ctx context.Context, tx *sql.Tx, version int) error {
	for v := version; v < store.SchemaVersion; v++ {
		for _, stmt := range migrations[v] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrate schema %d to %d: %w", v, v+1, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, store.SchemaVersion)); err != nil {
		return fmt.Errorf("migrate schema: %w", err)
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

// checkTables refuses a file that claims one of our versions but lacks a
// table of it: another program's database that happens to use
// user_version. A version-1 store lacks the run tables; upgrade adds them.
func checkTables(path string, version int, have map[string]bool) error {
	for _, name := range tables[version] {
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
