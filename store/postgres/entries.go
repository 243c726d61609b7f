package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/internal/codec"
	"github.com/flower-run/flower/store/internal/rows"
)

// column is the text of a time column (rows.TimeLayout).
var column = rows.Column

// Append writes entries in one transaction: it is Commit of a batch of
// entries only.
func (d *DB) Append(ctx context.Context, entries ...store.Entry) error {
	return d.Commit(ctx, store.Batch{Entries: entries})
}

// entryRow is an entry's column values.
type entryRow struct {
	key, uuid string
	parent    *string // NULL for a root entry
	kind      string
	time      string
	body      []byte
}

// encodeEntries checks the entries and encodes each before the transaction
// begins, so that a bad entry costs no round trip. The body is the one
// store/sqlite writes (its doc.go draws it).
func encodeEntries(entries []store.Entry) ([]entryRow, error) {
	rows := make([]entryRow, 0, len(entries))
	batch := make(map[string]bool, len(entries))
	for i, e := range entries {
		if e.Key == "" || e.UUID == "" || e.Kind == "" {
			return nil, fmt.Errorf("entry %d: key, uuid and kind are required", i)
		}
		if batch[e.UUID] {
			return nil, fmt.Errorf("uuid %s: %w", e.UUID, store.ErrDuplicate)
		}
		batch[e.UUID] = true
		body, err := codec.AppendEntry(nil, &e)
		if err != nil {
			return nil, fmt.Errorf("encode entry %s: %w", e.UUID, err)
		}
		r := entryRow{key: e.Key, uuid: e.UUID, kind: string(e.Kind), time: column(e.Time), body: body}
		if e.Parent != "" {
			r.parent = &e.Parent
		}
		rows = append(rows, r)
	}
	return rows, nil
}

const insertEntry = `INSERT INTO entries (key, uuid, parent, kind, time, body) VALUES ($1, $2, $3, $4, $5, $6)`

// insertEntryBy is insertEntry by a lease's write: entries.backend is the
// lease session's server process, not the pool connection's, so that the
// column still says which driver wrote what.
const insertEntryBy = `INSERT INTO entries (key, uuid, parent, kind, time, body, backend) VALUES ($1, $2, $3, $4, $5, $6, $7)`

// Load returns the entries of exactly key, in append order.
func (d *DB) Load(ctx context.Context, key string) ([]store.Entry, error) {
	rows, err := d.pool.Query(ctx, `SELECT seq, body FROM entries WHERE key = $1 ORDER BY seq`, key)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	defer rows.Close()
	var out []store.Entry
	for rows.Next() {
		var seq int64
		var body []byte // pgx's own buffer, valid until Next: decoding copies
		if err := rows.Scan(&seq, &body); err != nil {
			return nil, fmt.Errorf("load %s: %w", key, err)
		}
		e, err := codec.DecodeEntry(seq, string(body))
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

// Last returns the newest entry of key with the given kind: a seek on
// entries_key_kind_seq.
func (d *DB) Last(ctx context.Context, key string, kind store.Kind) (store.Entry, bool, error) {
	var seq int64
	var body []byte
	err := d.pool.QueryRow(ctx, `SELECT seq, body FROM entries WHERE key = $1 AND kind = $2 ORDER BY seq DESC LIMIT 1`,
		key, string(kind)).Scan(&seq, &body)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Entry{}, false, nil
	}
	if err != nil {
		return store.Entry{}, false, fmt.Errorf("last %s of %s: %w", kind, key, err)
	}
	e, err := codec.DecodeEntry(seq, string(body))
	if err != nil {
		return store.Entry{}, false, fmt.Errorf("last %s of %s: %w", kind, key, err)
	}
	return e, true, nil
}
