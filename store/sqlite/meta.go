package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/flower-run/flower/store"
)

// PutMeta records m for m.Key, replacing what was there: meta describes a
// session, it is not part of its history.
func (d *DB) PutMeta(ctx context.Context, m store.Meta) error {
	row, err := metaRow(m)
	if err != nil {
		return err
	}
	return d.write(ctx, "put meta "+m.Key, func(tx *sql.Tx) error {
		_, err := tx.StmtContext(ctx, d.stmts.putMeta).ExecContext(ctx, row...)
		return err
	})
}

// metaRow is the putMeta statement's arguments for m.
func metaRow(m store.Meta) ([]any, error) {
	if m.Key == "" {
		return nil, errors.New("put meta: key is required")
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("put meta %s: %w", m.Key, err)
	}
	return []any{m.Key, column(m.Created), column(time.Now()), string(body)}, nil
}

// Meta returns the metadata of key; ok is false if there is none.
func (d *DB) Meta(ctx context.Context, key string) (store.Meta, bool, error) {
	var body []byte
	err := d.stmts.getMeta.QueryRowContext(ctx, key).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Meta{}, false, nil
	}
	if err != nil {
		return store.Meta{}, false, fmt.Errorf("meta %s: %w", key, err)
	}
	m, err := decodeMeta(body)
	if err != nil {
		return store.Meta{}, false, fmt.Errorf("meta %s: %w", key, err)
	}
	return m, true, nil
}

// Sessions lists the metadata of the keys that start with prefix, oldest
// first (ties in key order). It compares a key range rather than using
// LIKE, whose '_' and '%' would match any character of a key.
func (d *DB) Sessions(ctx context.Context, prefix string) ([]store.Meta, error) {
	var upper any // NULL: no upper bound
	if u, ok := prefixEnd(prefix); ok {
		upper = u
	}
	rows, err := d.stmts.sessions.QueryContext(ctx, prefix, upper)
	if err != nil {
		return nil, fmt.Errorf("sessions %s: %w", prefix, err)
	}
	defer rows.Close()
	var out []store.Meta
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, fmt.Errorf("sessions %s: %w", prefix, err)
		}
		m, err := decodeMeta(body)
		if err != nil {
			return nil, fmt.Errorf("sessions %s: %w", prefix, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions %s: %w", prefix, err)
	}
	return out, nil
}

// prefixEnd is the least string greater than every string that starts with
// prefix, in byte order (SQLite's BINARY collation). There is none when
// prefix is empty or all 0xff bytes.
func prefixEnd(prefix string) (string, bool) {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}

func decodeMeta(body []byte) (store.Meta, error) {
	var m store.Meta
	if err := json.Unmarshal(body, &m); err != nil {
		return store.Meta{}, fmt.Errorf("decode meta: %w", err)
	}
	return m, nil
}

// PutSummary appends a summary for key; the latest one is current. Older
// ones stay, as everything else in the store does.
func (d *DB) PutSummary(ctx context.Context, key, text string) error {
	if key == "" {
		return errors.New("put summary: key is required")
	}
	return d.write(ctx, "put summary "+key, func(tx *sql.Tx) error {
		_, err := tx.StmtContext(ctx, d.stmts.putSummary).ExecContext(ctx, key, text, column(time.Now()))
		return err
	})
}

// Summary returns the latest summary of key; ok is false if there is none.
func (d *DB) Summary(ctx context.Context, key string) (string, bool, error) {
	var text string
	err := d.stmts.getSummary.QueryRowContext(ctx, key).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("summary %s: %w", key, err)
	}
	return text, true, nil
}
