package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower/store"
)

// migrations build the schema drawn in doc.go: migrations[v] takes a store
// of version v to v+1, as in store/sqlite, so a new database and an
// upgraded one get the same tables. The version is the one row of
// flower_schema, written in the transaction that writes the tables.
// Schema: change only with a store.SchemaVersion bump, by adding a
// migration; never edit one that has shipped.
var migrations = [][]string{
	// 0 -> 1: sessions.
	{
		`CREATE TABLE flower_schema (version integer NOT NULL)`,
		`INSERT INTO flower_schema (version) VALUES (0)`,
		`CREATE TABLE entries (
		seq    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		key    text COLLATE "C" NOT NULL,
		uuid   text COLLATE "C" NOT NULL UNIQUE,
		parent text COLLATE "C",
		kind   text COLLATE "C" NOT NULL,
		time   text COLLATE "C" NOT NULL,
		body   bytea NOT NULL,
		-- the server process that wrote the entry: with leases.backend,
		-- evidence of which driver wrote what (no two at once)
		backend integer NOT NULL DEFAULT pg_backend_pid()
	)`,
		`CREATE INDEX entries_key_seq ON entries(key, seq)`,
		`CREATE TABLE meta (
		key     text COLLATE "C" PRIMARY KEY,
		created text COLLATE "C" NOT NULL,
		updated text COLLATE "C" NOT NULL,
		body    text NOT NULL
	)`,
		`CREATE INDEX meta_created_key ON meta(created, key)`,
		`CREATE TABLE summaries (
		id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		key  text COLLATE "C" NOT NULL,
		text text NOT NULL,
		time text COLLATE "C" NOT NULL
	)`,
		`CREATE INDEX summaries_key_id ON summaries(key, id)`,
	},
	// 1 -> 2: run state (issue 9) and leases (issue 14).
	{
		`CREATE TABLE runs (
		seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id        text COLLATE "C" NOT NULL UNIQUE,
		workspace text COLLATE "C" NOT NULL,
		status    text COLLATE "C" NOT NULL,
		created   text COLLATE "C" NOT NULL,
		updated   text COLLATE "C" NOT NULL,
		body      text NOT NULL
	)`,
		`CREATE INDEX runs_workspace_seq ON runs(workspace, seq)`,
		`CREATE INDEX runs_status_seq ON runs(status, seq)`,
		`CREATE TABLE threads (
		workspace text COLLATE "C" PRIMARY KEY,
		thread    integer NOT NULL,
		woke      integer NOT NULL
	)`,
		`CREATE TABLE bindings (
		seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		workspace text COLLATE "C" NOT NULL,
		thread    integer NOT NULL,
		step      text COLLATE "C" NOT NULL,
		session   text COLLATE "C" NOT NULL,
		time      text COLLATE "C" NOT NULL
	)`,
		`CREATE INDEX bindings_workspace_thread_seq ON bindings(workspace, thread, seq)`,
		`CREATE TABLE results (
		seq  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		run  text COLLATE "C" NOT NULL,
		step text COLLATE "C" NOT NULL,
		body text NOT NULL,
		UNIQUE (run, step)
	)`,
		`CREATE INDEX results_run_seq ON results(run, seq)`,
		`CREATE INDEX entries_key_kind_seq ON entries(key, kind, seq)`,
		`CREATE TABLE leases (
		name      text COLLATE "C" PRIMARY KEY,
		host      text NOT NULL,
		pid       integer NOT NULL,
		backend   integer NOT NULL,
		since     timestamptz NOT NULL,
		heartbeat timestamptz NOT NULL
	)`,
	},
	// 2 -> 3: the event log, so a UI resumes a stream after a restart
	// (issue 14).
	{
		`CREATE TABLE events (
		stream text COLLATE "C" NOT NULL,
		seq    bigint NOT NULL,
		kind   text NOT NULL,
		time   text NOT NULL,
		body   text NOT NULL,
		PRIMARY KEY (stream, seq)
	)`,
	},
}

// tables[v] are the tables a store of version v has.
var tables = [][]string{
	nil,
	{"flower_schema", "entries", "meta", "summaries"},
	{"flower_schema", "entries", "meta", "summaries", "runs", "threads", "bindings", "results", "leases"},
	{"flower_schema", "entries", "meta", "summaries", "runs", "threads", "bindings", "results", "leases", "events"},
}

// migrateLock is the key of the transaction-level advisory lock that
// serializes schema checks and upgrades: of two processes opening a new
// database at once, the second waits for the first's commit and then
// finds the current version.
const migrateLock = 0x666c6f776572 // "flower"

// migrate creates the schema in an empty database schema, upgrades an
// older one, or checks a current one, in one transaction: a crash leaves
// the old version or the new one, never between.
func (d *DB) migrate(ctx context.Context) error {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
		return err
	}
	version, err := d.checkSchema(ctx, tx)
	if err != nil || version == store.SchemaVersion {
		return err
	}
	for v := version; v < store.SchemaVersion; v++ {
		for _, stmt := range migrations[v] {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("migrate schema %d to %d: %w", v, v+1, err)
			}
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE flower_schema SET version = $1`, store.SchemaVersion); err != nil {
		return fmt.Errorf("migrate schema: %w", err)
	}
	return tx.Commit(ctx)
}

// checkSchema reads the version and the tables of the current schema
// (search_path's first): ours, of this version or an older one, passes
// with its version; one without any of our tables passes as version 0;
// anything else is refused. Tables of other programs beside ours are
// left alone: a database is often shared.
func (d *DB) checkSchema(ctx context.Context, tx pgx.Tx) (int, error) {
	have, err := tableNames(ctx, tx)
	if err != nil {
		return 0, err
	}
	if !have["flower_schema"] {
		for _, name := range tables[store.SchemaVersion] {
			if have[name] {
				return 0, &notStoreError{where: d.where, why: "table " + name + " exists without flower_schema: another program's"}
			}
		}
		return 0, nil
	}
	var version int
	err = tx.QueryRow(ctx, `SELECT version FROM flower_schema`).Scan(&version)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, &notStoreError{where: d.where, why: "flower_schema is empty"}
	}
	if err != nil {
		return 0, err
	}
	if version < 1 || version > store.SchemaVersion {
		return 0, &schemaError{where: d.where, version: version}
	}
	for _, name := range tables[version] {
		if !have[name] {
			return 0, &notStoreError{where: d.where, why: "table " + name + " is missing"}
		}
	}
	return version, nil
}

// tableNames lists the tables of the current schema.
func tableNames(ctx context.Context, tx pgx.Tx) (map[string]bool, error) {
	rows, err := tx.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`)
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	return have, nil
}

// Version reads the schema version of the store at url and changes
// nothing: 0 for a database without flower's tables. Read-only commands
// use it to leave such a database alone.
func Version(ctx context.Context, url string) (int, error) {
	d, err := connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer d.pool.Close()
	tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return 0, openError(d.where, err)
	}
	defer tx.Rollback(ctx)
	v, err := d.checkSchema(ctx, tx)
	if err != nil {
		return 0, openError(d.where, err)
	}
	return v, nil
}

// openError names the database in an error of Open.
func openError(where string, err error) error {
	var se *schemaError
	var ne *notStoreError
	if errors.As(err, &se) || errors.As(err, &ne) {
		return err
	}
	return fmt.Errorf("open %s: %w", where, err)
}

// schemaError is a store written by another schema version. Its text is
// the one line a person sees.
type schemaError struct {
	where   string
	version int
}

func (e *schemaError) Error() string {
	return fmt.Sprintf("%s: schema version %d, this flower reads %d: use the flower that wrote it, or another database or schema (search_path)",
		e.where, e.version, store.SchemaVersion)
}

func (e *schemaError) Unwrap() error { return store.ErrSchema }

// notStoreError is a database schema that is not a session store.
type notStoreError struct {
	where, why string
}

func (e *notStoreError) Error() string {
	return fmt.Sprintf("%s: not a flower session store: %s", e.where, e.why)
}

func (e *notStoreError) Unwrap() error { return store.ErrNotStore }
