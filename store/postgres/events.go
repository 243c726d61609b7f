package postgres

import (
	"context"
	"fmt"
	"sync"

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
// Calls made at once share a transaction (group commit): a caller queues
// its events and either finds them written by the call that wrote last
// or writes every event queued by then itself. A worker driving 64 runs
// wrote each run's events in a transaction of their own, ~30 a run
// (issue 19). A failed write fails every call whose events it carried;
// each caller tries its events again (eventlog.Writer does).
func (d *DB) AppendEvents(ctx context.Context, evs ...store.Event) error {
	if len(evs) == 0 {
		return nil
	}
	if err := store.CheckEvents(evs); err != nil {
		return err
	}
	g := &d.events
	w := &eventWait{done: make(chan struct{})}
	g.mu.Lock()
	g.queued = append(g.queued, evs...)
	g.waiting = append(g.waiting, w)
	g.mu.Unlock()
	select {
	case <-w.done: // written by another call's transaction
		return w.err
	case g.token <- struct{}{}: // this call writes what is queued
	}
	g.mu.Lock()
	evs, waiting := g.queued, g.waiting
	g.queued, g.waiting = nil, nil
	g.mu.Unlock()
	if len(waiting) > 0 {
		// Not the caller's context: the transaction carries others' events.
		err := d.insertEvents(context.WithoutCancel(ctx), evs)
		for _, x := range waiting {
			x.err = err
			close(x.done)
		}
	}
	<-g.token
	<-w.done // in this transaction, or in the one before, which ended before the token was free
	return w.err
}

// eventGroup is AppendEvents' queue: events waiting for the next
// transaction, and who waits for them. token is held by the call
// writing.
type eventGroup struct {
	token   chan struct{} // capacity 1
	mu      sync.Mutex    // guards queued and waiting
	queued  []store.Event
	waiting []*eventWait
}

// eventWait is one call's wait: done closes once its events' transaction
// ended, with err.
type eventWait struct {
	done chan struct{}
	err  error
}

// insertEvents writes evs in one pipeline, one round trip: BEGIN, the SET
// LOCAL, one INSERT of all the events as arrays, COMMIT. The BEGIN is
// explicit because SET LOCAL needs a transaction block; a failed statement
// leaves the connection in an aborted block, which the pool then closes
// rather than reuses.
func (d *DB) insertEvents(ctx context.Context, evs []store.Event) error {
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
