package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	"github.com/flower-run/flower/store"
)

var _ store.Events = (*DB)(nil)

// openEvents opens the pool that writes the event log: one connection with
// synchronous NORMAL, so that its commits append to the WAL without an
// fsync. In WAL mode that is safe (the file is never corrupted; a power
// failure may roll back the latest of these commits), and the events
// become durable with the next commit of the main pool (synchronous FULL),
// whose fsync of the WAL covers every frame before its own. The agent
// commits every turn, so events ride along with the commits it already
// makes, and the hot path gets no fsync more (issue 14).
func openEvents(path string) *sql.DB {
	q := url.Values{"_pragma": {"busy_timeout(5000)", "journal_mode(WAL)", "synchronous(NORMAL)"},
		"_txlock": {"immediate"}}
	db, err := sql.Open("sqlite", fileURI(path, q))
	if err != nil {
		panic(err) // sql.Open fails only for an unknown driver
	}
	db.SetMaxOpenConns(1)
	return db
}

// AppendEvents writes events in one transaction of the events pool. It
// takes the handle's write mutex, so that the agent's commits in this
// process queue behind a short, unsynced transaction instead of sleeping in
// SQLite's busy handler.
func (d *DB) AppendEvents(ctx context.Context, evs ...store.Event) error {
	if len(evs) == 0 {
		return nil
	}
	if err := store.CheckEvents(evs); err != nil {
		return err
	}
	d.wmu.Lock()
	defer d.wmu.Unlock()
	tx, err := d.ev.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx,
		`INSERT INTO events (stream, seq, kind, time, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)
	if err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	defer stmt.Close()
	for _, e := range evs {
		if _, err := stmt.ExecContext(ctx, e.Stream, e.Seq, e.Kind, column(e.Time), string(e.Body)); err != nil {
			return fmt.Errorf("append events: %s #%d: %w", e.Stream, e.Seq, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("append events: commit: %w", err)
	}
	return nil
}

// EventsAfter returns the events of stream after seq after.
func (d *DB) EventsAfter(ctx context.Context, stream string, after int64, limit int) ([]store.Event, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := d.db.QueryContext(ctx,
		`SELECT seq, kind, time, body FROM events WHERE stream = ? AND seq > ? ORDER BY seq LIMIT ?`, stream, after, limit)
	if err != nil {
		return nil, fmt.Errorf("events of %s: %w", stream, err)
	}
	defer rows.Close()
	var out []store.Event
	for rows.Next() {
		e := store.Event{Stream: stream}
		var at, body string
		if err := rows.Scan(&e.Seq, &e.Kind, &at, &body); err != nil {
			return nil, fmt.Errorf("events of %s: %w", stream, err)
		}
		if e.Time, err = time.Parse(timeLayout, at); err != nil {
			return nil, fmt.Errorf("events of %s: seq %d: time %q: %w", stream, e.Seq, at, err)
		}
		e.Body = []byte(body)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events of %s: %w", stream, err)
	}
	return out, nil
}

// LastEvent is the highest seq of stream.
func (d *DB) LastEvent(ctx context.Context, stream string) (int64, error) {
	var n sql.NullInt64
	if err := d.db.QueryRowContext(ctx, `SELECT max(seq) FROM events WHERE stream = ?`, stream).Scan(&n); err != nil {
		return 0, fmt.Errorf("last event of %s: %w", stream, err)
	}
	return n.Int64, nil
}
