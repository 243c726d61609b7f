package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// statements are prepared once per DB. database/sql re-prepares a statement
// on each pool connection the first time it is used there and keeps it.
type statements struct {
	insertEntry  *sql.Stmt
	loadEntries  *sql.Stmt
	countEntries *sql.Stmt
	lastEntry    *sql.Stmt
	putMeta      *sql.Stmt
	getMeta      *sql.Stmt
	sessions     *sql.Stmt
	putSummary   *sql.Stmt
	getSummary   *sql.Stmt

	// Run state (schema 2).
	archive      *sql.Stmt
	wake         *sql.Stmt
	ensureThread *sql.Stmt
	bind         *sql.Stmt
	lineage      *sql.Stmt
	putRun       *sql.Stmt
	getRun       *sql.Stmt
	runsAll      *sql.Stmt
	runsOf       *sql.Stmt
	putResult    *sql.Stmt
	resultsAll   *sql.Stmt
	resultsOf    *sql.Stmt
}

// stmtDef is a statement's field and its query.
type stmtDef struct {
	dst   **sql.Stmt
	query string
}

// all lists every statement with its query, for prepare and close.
func (s *statements) all() []stmtDef {
	return []stmtDef{
		{&s.insertEntry, `INSERT INTO entries (key, uuid, parent, kind, time, body) VALUES (?, ?, ?, ?, ?, ?)`},
		// The body is read as TEXT: the driver hands a TEXT value over as a
		// Go string of its own (one copy out of SQLite) that database/sql
		// passes on as it is, while a BLOB would be copied a second time.
		// The cast changes no byte.
		{&s.loadEntries, `SELECT seq, CAST(body AS TEXT) FROM entries WHERE key = ? ORDER BY seq`},
		{&s.countEntries, `SELECT count(*) FROM entries WHERE key = ?`},
		{&s.lastEntry, `SELECT seq, CAST(body AS TEXT) FROM entries WHERE key = ? AND kind = ? ORDER BY seq DESC LIMIT 1`},
		{&s.putMeta, `INSERT INTO meta (key, created, updated, body) VALUES (?, ?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET created = excluded.created, updated = excluded.updated, body = excluded.body`},
		{&s.getMeta, `SELECT body FROM meta WHERE key = ?`},
		{&s.sessions, `SELECT body FROM meta WHERE key >= ?1 AND (?2 IS NULL OR key < ?2) ORDER BY created, key`},
		{&s.putSummary, `INSERT INTO summaries (key, text, time) VALUES (?, ?, ?)`},
		{&s.getSummary, `SELECT text FROM summaries WHERE key = ? ORDER BY id DESC LIMIT 1`},

		// Archive starts the next thread: its number up, no wakes, and no
		// bindings, as bindings belong to the thread they were made in.
		{&s.archive, `INSERT INTO threads (workspace, thread, woke) VALUES (?, 1, 0)
			ON CONFLICT (workspace) DO UPDATE SET thread = thread + 1, woke = 0`},
		{&s.wake, `INSERT INTO threads (workspace, thread, woke) VALUES (?, 0, 1)
			ON CONFLICT (workspace) DO UPDATE SET woke = woke + 1`},
		{&s.ensureThread, `INSERT INTO threads (workspace, thread, woke) VALUES (?, 0, 0)
			ON CONFLICT (workspace) DO NOTHING`},
		{&s.bind, `INSERT INTO bindings (workspace, thread, step, session, time)
			SELECT ?1, thread, ?2, ?3, ?4 FROM threads WHERE workspace = ?1`},
		{&s.lineage, `SELECT t.thread, t.woke, b.step, b.session FROM threads t
			LEFT JOIN bindings b ON b.workspace = t.workspace AND b.thread = t.thread
			WHERE t.workspace = ? ORDER BY b.seq`},
		// An upsert keeps the row, and so its seq: the order of Runs and
		// Results is the order of first writes.
		{&s.putRun, `INSERT INTO runs (id, workspace, status, created, updated, body) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET workspace = excluded.workspace, status = excluded.status,
			created = excluded.created, updated = excluded.updated, body = excluded.body`},
		{&s.getRun, `SELECT id, body FROM runs WHERE id = ?`},
		{&s.runsAll, `SELECT id, body FROM runs ORDER BY seq`},
		{&s.runsOf, `SELECT id, body FROM runs WHERE workspace = ? ORDER BY seq`},
		{&s.putResult, `INSERT INTO results (run, step, body) VALUES (?, ?, ?)
			ON CONFLICT (run, step) DO UPDATE SET body = excluded.body`},
		{&s.resultsAll, `SELECT run, step, body FROM results ORDER BY seq`},
		{&s.resultsOf, `SELECT run, step, body FROM results WHERE run = ? ORDER BY seq`},
	}
}

func (s *statements) prepare(ctx context.Context, db *sql.DB) error {
	for _, p := range s.all() {
		st, err := db.PrepareContext(ctx, p.query)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", p.query, err)
		}
		*p.dst = st
	}
	return nil
}

func (s *statements) close() error {
	var errs []error
	for _, p := range s.all() {
		if st := *p.dst; st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}
