package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/internal/codec"
)

// loadHeads is LoadHeads' query: ?2 the body length above which a result
// is cut, ?3 and ?4 the spans kept. Bodies are BLOBs, so substr counts
// bytes; the cast to TEXT comes after it, as in loadEntries.
const loadHeadsQuery = `SELECT seq, length(body), CAST(CASE WHEN kind = 'tool_result' AND length(body) > ?2
	THEN substr(body, 1, ?3) || substr(body, length(body) - ?4 + 1) ELSE body END AS TEXT)
	FROM entries WHERE key = ?1 ORDER BY seq`

// LoadHeads is Load with the content of each tool result over over bytes
// cut to its first head bytes (store.Heads).
func (d *DB) LoadHeads(ctx context.Context, key string, over, head int) ([]store.Entry, error) {
	if head < 1 || head >= over {
		return nil, fmt.Errorf("load %s: head %d must be in [1, over %d)", key, head, over)
	}
	cutAbove, prefix, tail := codec.HeadSpans(over, head)
	var n int
	if err := d.stmts.countEntries.QueryRowContext(ctx, key).Scan(&n); err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	rows, err := d.db.QueryContext(ctx, loadHeadsQuery, key, cutAbove, prefix, tail)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	defer rows.Close()
	h := codec.HeadRows{Over: over, Head: head, Out: make([]store.Entry, 0, n)}
	for rows.Next() {
		var seq int64
		var size int
		var body string
		if err := rows.Scan(&seq, &size, &body); err != nil {
			return nil, fmt.Errorf("load %s: %w", key, err)
		}
		h.Add(seq, body, size)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	rows.Close()
	out, err := h.Whole(func(seq int64) (store.Entry, bool, error) { return d.entry(ctx, key, seq) })
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	return out, nil
}

// ResultContent returns the whole content of the op of key's entry seq.
func (d *DB) ResultContent(ctx context.Context, key string, seq int64) (string, bool, error) {
	e, ok, err := d.entry(ctx, key, seq)
	if err != nil || !ok || e.Op == nil {
		return "", false, err
	}
	return e.Op.Content, true, nil
}

// entry reads one entry of key by seq, whole.
func (d *DB) entry(ctx context.Context, key string, seq int64) (store.Entry, bool, error) {
	var body string
	err := d.db.QueryRowContext(ctx, `SELECT CAST(body AS TEXT) FROM entries WHERE seq = ? AND key = ?`, seq, key).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Entry{}, false, nil
	}
	if err != nil {
		return store.Entry{}, false, fmt.Errorf("entry seq %d of %s: %w", seq, key, err)
	}
	e, err := codec.DecodeEntry(seq, body)
	return e, err == nil, err
}

var _ store.Heads = (*DB)(nil)
