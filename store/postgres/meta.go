package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower/store"
)

const putMeta = `INSERT INTO meta (key, created, updated, body) VALUES ($1, $2, $3, $4)
	ON CONFLICT (key) DO UPDATE SET created = excluded.created, updated = excluded.updated, body = excluded.body`

// PutMeta records m for m.Key, replacing what was there.
func (d *DB) PutMeta(ctx context.Context, m store.Meta) error {
	row, err := metaRow(m)
	if err != nil {
		return err
	}
	return exec1(ctx, d.pool, "put meta "+m.Key, putMeta, row...)
}

// metaRow is putMeta's arguments for m.
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
	var body string
	err := d.pool.QueryRow(ctx, `SELECT body FROM meta WHERE key = $1`, key).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Meta{}, false, nil
	}
	if err != nil {
		return store.Meta{}, false, fmt.Errorf("meta %s: %w", key, err)
	}
	var m store.Meta
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return store.Meta{}, false, fmt.Errorf("meta %s: decode: %w", key, err)
	}
	return m, true, nil
}

// Sessions lists the metadata of the keys that start with prefix, oldest
// first (ties in key order). starts_with compares bytes, where LIKE would
// take '_' and '%' as wildcards; key >= prefix lets the index find the
// start.
func (d *DB) Sessions(ctx context.Context, prefix string) ([]store.Meta, error) {
	rows, err := d.pool.Query(ctx,
		`SELECT body FROM meta WHERE key >= $1 AND starts_with(key, $1) ORDER BY created, key`, prefix)
	if err != nil {
		return nil, fmt.Errorf("sessions %s: %w", prefix, err)
	}
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("sessions %s: %w", prefix, err)
	}
	out := make([]store.Meta, 0, len(bodies))
	for _, b := range bodies {
		var m store.Meta
		if err := json.Unmarshal([]byte(b), &m); err != nil {
			return nil, fmt.Errorf("sessions %s: decode meta: %w", prefix, err)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// PutSummary appends a summary for key; the latest one is current.
func (d *DB) PutSummary(ctx context.Context, key, text string) error {
	if key == "" {
		return errors.New("put summary: key is required")
	}
	return exec1(ctx, d.pool, "put summary "+key, putSummary, key, text, column(time.Now()))
}

const putSummary = `INSERT INTO summaries (key, text, time) VALUES ($1, $2, $3)`

// Summary returns the latest summary of key; ok is false if there is none.
func (d *DB) Summary(ctx context.Context, key string) (string, bool, error) {
	var text string
	err := d.pool.QueryRow(ctx, `SELECT text FROM summaries WHERE key = $1 ORDER BY id DESC LIMIT 1`, key).Scan(&text)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("summary %s: %w", key, err)
	}
	return text, true, nil
}
