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
}

func (s *statements) prepare(ctx context.Context, db *sql.DB) error {
	for _, p := range []struct {
		dst   **sql.Stmt
		query string
	}{
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
	} {
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
	for _, st := range []*sql.Stmt{s.insertEntry, s.loadEntries, s.countEntries, s.lastEntry, s.putMeta, s.getMeta, s.sessions, s.putSummary, s.getSummary} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}
