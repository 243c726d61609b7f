package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/internal/rows"
)

var _ store.Events = (*DB)(nil)

// AppendEvents writes events in one transaction with synchronous_commit
// off: the server acknowledges the commit before its WAL record is flushed
// (a server crash may lose the latest events, never corrupt anything), and
// the next commit of run state, which waits for its flush, flushes these
// records too. Events thus add no wait for a disk to the run (issue 14).
// They go through the pool unfenced (not checked against a lease): derived
// data, and a duplicate (stream, seq) is skipped.
//
// The transaction is one pipeline, one round trip: BEGIN, the SET LOCAL,
// one INSERT of all the events as arrays, COMMIT (issue 19: a worker
// driving 64 runs spent a third of its pool's round trips on BEGIN and
// COMMIT of events, one INSERT each). The BEGIN is explicit because SET
// LOCAL needs a transaction block; a failed statement leaves the
// connection in an aborted block, which the pool then closes rather than
// reuses.
func (d *DB) AppendEvents(ctx context.Context, evs ...store.Event) error {
	if len(evs) == 0 {
		return nil
	}
	if err := store.CheckEvents(evs); err != nil {
		return err
	}
	n := len(evs)
	streams, seqs, kinds, times, bodies := make([]string, n), make([]int64, n), make([]string, n), make([]string, n), make([]string, n)
	for i, e := range evs {
		streams[i], seqs[i], kinds[i], times[i], bodies[i] = e.Stream, e.Seq, e.Kind, column(e.Time), string(e.Body)
	}
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SET LOCAL synchronous_commit = off`)
	b.Queue(insertEvents, streams, seqs, kinds, times, bodies)
	b.Queue(`COMMIT`)
	if err := d.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	return nil
}

// insertEvents inserts the events given as columns.
const insertEvents = `INSERT INTO events (stream, seq, kind, time, body)
	SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[])
	ON CONFLICT DO NOTHING`

// EventsAfter returns the events of stream after seq after.
func (d *DB) EventsAfter(ctx context.Context, stream string, after int64, limit int) ([]store.Event, error) {
	q := `SELECT seq, kind, time, body FROM events WHERE stream = $1 AND seq > $2 ORDER BY seq`
	args := []any{stream, after}
	if limit > 0 {
		q += ` LIMIT $3`
		args = append(args, limit)
	}
	rs, err := d.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("events of %s: %w", stream, err)
	}
	defer rs.Close()
	return rows.Collect(rs, "events of "+stream, rows.Event(stream))
}

// LastEvent is the highest seq of stream.
func (d *DB) LastEvent(ctx context.Context, stream string) (int64, error) {
	var n *int64
	if err := d.pool.QueryRow(ctx, `SELECT max(seq) FROM events WHERE stream = $1`, stream).Scan(&n); err != nil {
		return 0, fmt.Errorf("last event of %s: %w", stream, err)
	}
	if n == nil {
		return 0, nil
	}
	return *n, nil
}
