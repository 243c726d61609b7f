package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/internal/codec"
)

// LoadHeads is Load with the content of each tool result over over bytes
// cut to its first head bytes (store.Heads): the body of a large result is
// read as its start and its end (codec.HeadSpans), so most of its content
// stays in the server and off the wire. A body that does not decode that
// way is read again whole.
func (d *DB) LoadHeads(ctx context.Context, key string, over, head int) ([]store.Entry, error) {
	if head < 1 || head >= over {
		return nil, fmt.Errorf("load %s: head %d must be in [1, over %d)", key, head, over)
	}
	cutAbove, prefix, tail := codec.HeadSpans(over, head)
	rows, err := d.pool.Query(ctx, `SELECT seq, length(body), CASE WHEN kind = 'tool_result' AND length(body) > $2
		THEN substr(body, 1, $3) || substr(body, length(body) - $4 + 1) ELSE body END
		FROM entries WHERE key = $1 ORDER BY seq`, key, cutAbove, prefix, tail)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	defer rows.Close()
	h := codec.HeadRows{Over: over, Head: head}
	for rows.Next() {
		var seq int64
		var size int
		var body []byte // pgx's own buffer, valid until Next: decoding copies
		if err := rows.Scan(&seq, &size, &body); err != nil {
			return nil, fmt.Errorf("load %s: %w", key, err)
		}
		h.Add(seq, string(body), size)
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
	var body []byte
	err := d.pool.QueryRow(ctx, `SELECT body FROM entries WHERE seq = $1 AND key = $2`, seq, key).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Entry{}, false, nil
	}
	if err != nil {
		return store.Entry{}, false, fmt.Errorf("entry seq %d of %s: %w", seq, key, err)
	}
	e, err := codec.DecodeEntry(seq, string(body))
	return e, err == nil, err
}

var _ store.Heads = (*DB)(nil)
