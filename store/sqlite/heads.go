package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/flower-run/flower/store"
)

// Loading heads (store.Heads, issue 12). A tool result's content is the
// last string of its body but one byte of flags (doc.go), so the body of a
// large result is read as its first headSpan bytes and its last tailSpan:
// the fields before the content, the content's head, and the flags. The
// middle, most of the content, stays in the database: SQLite still walks
// the overflow pages, but nothing of it is copied into Go or collected.
// A body that does not decode that way (a result with a large input, say)
// is read again whole.
const (
	prefixSpan = 1024 // room for the fields before the content
	tailSpan   = 64   // room for what follows it
)

// loadHeads is LoadHeads' query: ?2 the body length above which a result
// is cut, ?3 and ?4 the spans kept. Bodies are BLOBs, so substr counts
// bytes; the cast to TEXT comes after it, as in loadEntries.
const loadHeadsQuery = `SELECT seq, length(body), CAST(CASE WHEN kind = 'tool_result' AND length(body) > ?2
	THEN substr(body, 1, ?3) || substr(body, length(body) - ?4 + 1) ELSE body END AS TEXT)
	FROM entries WHERE key = ?1 ORDER BY seq`

var errCut = errors.New("the part of the body left out is not inside a result's content")

// LoadHeads is Load with the content of each tool result over over bytes
// cut to its first head bytes (store.Heads).
func (d *DB) LoadHeads(ctx context.Context, key string, over, head int) ([]store.Entry, error) {
	if head < 1 || head >= over {
		return nil, fmt.Errorf("load %s: head %d must be in [1, over %d)", key, head, over)
	}
	cutAbove, prefix, tail := HeadSpans(over, head)
	var n int
	if err := d.stmts.countEntries.QueryRowContext(ctx, key).Scan(&n); err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	rows, err := d.db.QueryContext(ctx, loadHeadsQuery, key, cutAbove, prefix, tail)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	defer rows.Close()
	h := HeadRows{Over: over, Head: head, Out: make([]store.Entry, 0, n)}
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

// HeadRows gathers the rows of a heads query, as SQLite and PostgreSQL read
// them alike: each cut body decoded (DecodeHead), and those that do not
// decode that way read again whole once the rows are done.
type HeadRows struct {
	Over, Head int
	Out        []store.Entry
	again      []int // indexes in Out of the entries to read whole
}

// Add decodes the row of seq: body, of the whole body's length size.
func (h *HeadRows) Add(seq int64, body string, size int) {
	e, err := DecodeHead(seq, body, size, h.Over, h.Head)
	if err != nil {
		e, h.again = store.Entry{Seq: seq}, append(h.again, len(h.Out))
	}
	h.Out = append(h.Out, e)
}

// Whole reads the entries Add could not decode with entry, whole, and
// returns them all.
func (h *HeadRows) Whole(entry func(seq int64) (store.Entry, bool, error)) ([]store.Entry, error) {
	for _, i := range h.again {
		e, ok, err := entry(h.Out[i].Seq)
		if err == nil && !ok {
			err = fmt.Errorf("entry seq %d is gone", h.Out[i].Seq)
		}
		if err != nil {
			return nil, err
		}
		h.Out[i] = e
	}
	return h.Out, nil
}

// HeadSpans are the figures of a heads query for over and head: a
// tool_result body longer than cutAbove bytes is read as its first prefix
// bytes and its last tail (store/postgres runs the same query).
func HeadSpans(over, head int) (cutAbove, prefix, tail int) {
	prefix = head + prefixSpan
	return max(over, prefix+tailSpan), prefix, tailSpan
}

// DecodeHead decodes a body as a heads query returns it: whole when its
// length is size, else its first and last bytes (HeadSpans), the content
// of its result cut to head bytes. Any other body is an error: read it
// whole (DecodeEntry names what is wrong with it).
func DecodeHead(seq int64, body string, size, over, head int) (store.Entry, error) {
	if len(body) == size {
		return decodeEntry(seq, body)
	}
	_, prefix, tail := HeadSpans(over, head)
	if len(body) != prefix+tail || size <= len(body) {
		return store.Entry{}, errCut
	}
	r := &reader{s: body[:prefix], rest: body[prefix:], size: size, over: over, head: head}
	e, err := decodeWith(r)
	if err != nil {
		return store.Entry{}, err
	}
	if e.UUID == "" || e.Key == "" || e.Kind == "" || e.Op == nil {
		return store.Entry{}, errCut
	}
	e.Seq = seq
	return e, nil
}

// content reads a result's content: whole, or, in a cut body, its head
// and the whole length, going on in the body's end after it. A content of
// over bytes or fewer is not cut: the body must be read whole.
func (r *reader) content() (string, int) {
	if r.size == 0 {
		return r.str(), 0
	}
	n64 := r.uvarint()
	start, tail := r.off, r.size-len(r.rest) // tail: where rest begins in the whole body
	if r.err != nil || n64 > uint64(r.size) {
		r.fail(errCut)
		return "", 0
	}
	end := start + int(n64)
	if end <= start+r.over || start+r.head > len(r.s) || end < tail || end > r.size {
		r.fail(errCut)
		return "", 0
	}
	c := r.s[start : start+r.head]
	r.s, r.off, r.rest, r.size = r.rest, end-tail, "", 0
	return c, int(n64)
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
	e, err := decodeEntry(seq, body)
	return e, err == nil, err
}

var _ store.Heads = (*DB)(nil)
