package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/internal/codec"
	"github.com/flower-run/flower/store/internal/rows"
)

// column is the text of a time column (rows.TimeLayout).
var column = rows.Column

// Append writes entries in one transaction, fsync'd when it returns: a model
// response and the intents of its tool calls become durable together. It is
// Commit of a batch of entries only.
func (d *DB) Append(ctx context.Context, entries ...store.Entry) error {
	return d.Commit(ctx, store.Batch{Entries: entries})
}

// encodeEntries checks the entries and turns each into its column values
// before the transaction begins, so that a bad entry costs no lock.
func encodeEntries(entries []store.Entry) ([][]any, error) {
	rows := make([][]any, 0, len(entries))
	batch := make(map[string]bool, len(entries))
	for i, e := range entries {
		if e.Key == "" || e.UUID == "" || e.Kind == "" {
			return nil, fmt.Errorf("entry %d: key, uuid and kind are required", i)
		}
		if batch[e.UUID] {
			return nil, fmt.Errorf("uuid %s: %w", e.UUID, store.ErrDuplicate)
		}
		batch[e.UUID] = true
		body, err := codec.AppendEntry(nil, &e) // Seq is not in the body: the store assigns it
		if err != nil {
			return nil, fmt.Errorf("encode entry %s: %w", e.UUID, err)
		}
		var parent any // NULL for a root entry
		if e.Parent != "" {
			parent = e.Parent
		}
		rows = append(rows, []any{e.Key, e.UUID, parent, string(e.Kind), column(e.Time), body})
	}
	return rows, nil
}

// entryError turns a unique violation into store.ErrDuplicate. uuid is the
// only unique column besides seq, which the store assigns.
func entryError(err error, row []any) error {
	if sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
		return fmt.Errorf("uuid %s: %w", row[1], store.ErrDuplicate)
	}
	return err
}

// write runs fn in a write transaction and commits it.
func (d *DB) write(ctx context.Context, op string, fn func(*sql.Tx) error) error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer tx.Rollback() // a no-op after Commit
	if err := fn(tx); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := tx.Commit(); err != nil {
		if op == "commit" { // not "commit: commit:"
			return fmt.Errorf("commit: %w", err)
		}
		return fmt.Errorf("%s: commit: %w", op, err)
	}
	failpoint.Durable("commit " + op)
	return nil
}

// Load returns the entries of exactly key (a sub-path is another key), in
// append order.
func (d *DB) Load(ctx context.Context, key string) ([]store.Entry, error) {
	// The count sizes the slice once: growing it entry by entry would copy
	// a long session's entries about twice over. It is only a hint, so it
	// need not be read in the transaction of the rows.
	var n int
	if err := d.stmts.countEntries.QueryRowContext(ctx, key).Scan(&n); err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	rows, err := d.stmts.loadEntries.QueryContext(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	defer rows.Close()
	var out []store.Entry
	if n > 0 {
		out = make([]store.Entry, 0, n)
	}
	for rows.Next() {
		var seq int64
		var body string // the driver's own copy: decoding slices it, copying nothing
		if err := rows.Scan(&seq, &body); err != nil {
			return nil, fmt.Errorf("load %s: %w", key, err)
		}
		e, err := codec.DecodeEntry(seq, body)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", key, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	return out, nil
}

// Last returns the newest entry of key with the given kind.
func (d *DB) Last(ctx context.Context, key string, kind store.Kind) (store.Entry, bool, error) {
	var seq int64
	var body string
	err := d.stmts.lastEntry.QueryRowContext(ctx, key, string(kind)).Scan(&seq, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Entry{}, false, nil
	}
	if err != nil {
		return store.Entry{}, false, fmt.Errorf("last %s of %s: %w", kind, key, err)
	}
	e, err := codec.DecodeEntry(seq, body)
	if err != nil {
		return store.Entry{}, false, fmt.Errorf("last %s of %s: %w", kind, key, err)
	}
	return e, true, nil
}
