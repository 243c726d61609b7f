package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/internal/codec"
)

var (
	_ store.Stater    = (*DB)(nil)
	_ store.LastSeqer = (*DB)(nil)
)

// LastSeq is the seq of key's newest entry, from the (key, seq) index.
func (d *DB) LastSeq(ctx context.Context, key string) (int64, error) {
	var n int64
	if err := d.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM entries WHERE key = ?`, key).Scan(&n); err != nil {
		return 0, fmt.Errorf("last seq of %s: %w", key, err)
	}
	return n, nil
}

// Stats reads a session's count, last seq, responses and cost, and first
// prompt without decoding its tool results, op records and notes (the
// bulk of a long session): the kind index seeks the few rows it needs.
func (d *DB) Stats(ctx context.Context, key string) (store.Stats, error) {
	var st store.Stats
	if err := d.db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM entries WHERE key = ?`, key).
		Scan(&st.Entries, &st.LastSeq); err != nil {
		return st, fmt.Errorf("stats of %s: %w", key, err)
	}
	rows, err := d.db.QueryContext(ctx, `SELECT seq, body FROM entries WHERE key = ? AND kind = ? ORDER BY seq`, key, string(store.KindAssistant))
	if err != nil {
		return st, fmt.Errorf("stats of %s: %w", key, err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var body string
		if err := rows.Scan(&seq, &body); err != nil {
			return st, fmt.Errorf("stats of %s: %w", key, err)
		}
		e, err := codec.DecodeEntry(seq, body)
		if err != nil {
			return st, fmt.Errorf("stats of %s: %w", key, err)
		}
		st.Turns++
		st.Cost += e.Cost
		st.LastStop = e.StopReason
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("stats of %s: %w", key, err)
	}
	st.Prompt, err = d.firstPrompt(ctx, key)
	return st, err
}

// firstPrompt is the text of key's first user entry with a message.
func (d *DB) firstPrompt(ctx context.Context, key string) (string, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT seq, body FROM entries WHERE key = ? AND kind = ? ORDER BY seq`, key, string(store.KindUser))
	if err != nil {
		return "", fmt.Errorf("stats of %s: %w", key, err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var body string
		if err := rows.Scan(&seq, &body); err != nil {
			return "", fmt.Errorf("stats of %s: %w", key, err)
		}
		e, err := codec.DecodeEntry(seq, body)
		if err != nil {
			return "", fmt.Errorf("stats of %s: %w", key, err)
		}
		if e.Message != nil {
			return e.Message.TextOf(), nil
		}
	}
	if err := rows.Err(); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("stats of %s: %w", key, err)
	}
	return "", nil
}
