package postgres

import (
	"context"
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
	if err := d.pool.QueryRow(ctx, `SELECT COALESCE(max(seq), 0) FROM entries WHERE key = $1`, key).Scan(&n); err != nil {
		return 0, fmt.Errorf("last seq of %s: %w", key, err)
	}
	return n, nil
}

// Stats reads a session's count, last seq, responses and cost, and first
// prompt without decoding its tool results (flower sessions): the kind
// index seeks the rows it needs, as in store/sqlite.
func (d *DB) Stats(ctx context.Context, key string) (store.Stats, error) {
	var st store.Stats
	if err := d.pool.QueryRow(ctx, `SELECT count(*), COALESCE(max(seq), 0) FROM entries WHERE key = $1`, key).
		Scan(&st.Entries, &st.LastSeq); err != nil {
		return st, fmt.Errorf("stats of %s: %w", key, err)
	}
	err := d.eachOfKind(ctx, key, store.KindAssistant, func(e store.Entry) bool {
		st.Turns++
		st.Cost += e.Cost
		st.LastStop = e.StopReason
		return true
	})
	if err != nil {
		return st, err
	}
	err = d.eachOfKind(ctx, key, store.KindUser, func(e store.Entry) bool {
		if e.Message == nil {
			return true
		}
		st.Prompt = e.Message.TextOf()
		return false
	})
	return st, err
}

// eachOfKind decodes key's entries of kind in order, until fn says stop.
func (d *DB) eachOfKind(ctx context.Context, key string, kind store.Kind, fn func(store.Entry) bool) error {
	rows, err := d.pool.Query(ctx, `SELECT seq, body FROM entries WHERE key = $1 AND kind = $2 ORDER BY seq`, key, string(kind))
	if err != nil {
		return fmt.Errorf("stats of %s: %w", key, err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var body []byte // pgx's own buffer, valid until Next: decoding copies
		if err := rows.Scan(&seq, &body); err != nil {
			return fmt.Errorf("stats of %s: %w", key, err)
		}
		e, err := codec.DecodeEntry(seq, string(body))
		if err != nil {
			return fmt.Errorf("stats of %s: %w", key, err)
		}
		if !fn(e) {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("stats of %s: %w", key, err)
	}
	return nil
}
