package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower/store"
)

// A lease says which process drives the runs of a workspace. It is a
// PostgreSQL session-level advisory lock, the way GoodJob and Que lease
// jobs: the server holds it for as long as the connection that took it
// lives, so a process that dies, or whose connection dies, loses it with
// no timeout to wait for and nothing stale to clean up. Every write of
// the leaseholder goes through that same connection (Lease.Store), so
// a process that lost its lease has also lost the means to write:
// fencing without tokens. The leases table only describes holders for
// people (flower ps): who, since when, and a heartbeat.

// DefaultTTL is how long a lease's holder may go without a heartbeat
// before another process takes the lease over, unless Open is given
// LeaseTTL. The holder stamps its heartbeat every TTL/3.
const DefaultTTL = 30 * time.Second

// Option configures a DB (Open).
type Option func(*DB)

// LeaseTTL sets the TTL of the leases this DB takes and judges: a holder
// heartbeats every ttl/3, and a lease whose heartbeat is older than ttl is
// taken over by the next Lease (doc.go, Leases). It must be the same for
// every process sharing the database.
func LeaseTTL(ttl time.Duration) Option {
	return func(d *DB) {
		if ttl > 0 {
			d.ttl = ttl
		}
	}
}

// lockKey is the advisory lock key of name: a hash of the schema and the
// name, so that stores in different schemas of one database do not
// share leases.
const lockKey = `hashtextextended(current_schema() || '/' || $1, 0)`

// Lease is a held lease. Its connection is out of the pool, used by
// nothing else; it is never reconnected.
type Lease struct {
	db   *DB
	name string

	mu   sync.Mutex // the connection serves one call at a time
	conn *pgx.Conn

	paused   atomic.Bool   // tests: the heartbeat skips its stamps
	lost     chan struct{} // closed when the connection is found dead
	lostOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

var (
	_ store.Leaser = (*DB)(nil)
	_ store.Lease  = (*Lease)(nil)
)

// Lease is Acquire for the store.Leaser interface.
func (d *DB) Lease(ctx context.Context, name string) (store.Lease, error) {
	l, err := d.Acquire(ctx, name)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Acquire takes the lease on name for this process, or fails at once with
// a *store.BusyError naming the holder. A holder whose heartbeat is older
// than the TTL is taken over: its connection is ended
// (pg_terminate_backend), and the lock with it (doc.go, Leases).
func (d *DB) Acquire(ctx context.Context, name string) (*Lease, error) {
	pc, err := d.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("lease %s: %w", name, err)
	}
	conn := pc.Hijack() // out of the pool: its lock lives and dies with it
	l, err := d.take(ctx, conn, name)
	if err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	go l.heartbeat()
	return l, nil
}

// take takes the lock on conn, taking over a stale holder, and describes
// the new holder in the leases table.
func (d *DB) take(ctx context.Context, conn *pgx.Conn, name string) (*Lease, error) {
	got, err := tryLock(ctx, conn, name)
	if err == nil && !got {
		var ended bool
		if ended, err = d.endStale(ctx, conn, name); ended {
			got, err = tryLock(ctx, conn, name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("lease %s: %w", name, err)
	}
	if !got {
		h, err := d.holder(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("lease %s: %w", name, err)
		}
		h.Live = true
		return nil, &store.BusyError{Holder: h}
	}
	host, _ := os.Hostname()
	_, err = conn.Exec(ctx, `INSERT INTO leases (name, host, pid, backend, since, heartbeat)
		VALUES ($1, $2, $3, pg_backend_pid(), now(), now())
		ON CONFLICT (name) DO UPDATE SET host = excluded.host, pid = excluded.pid, backend = excluded.backend,
		since = excluded.since, heartbeat = excluded.heartbeat`, name, host, os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("lease %s: %w", name, err)
	}
	return &Lease{db: d, name: name, conn: conn, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}, nil
}

func tryLock(ctx context.Context, conn *pgx.Conn, name string) (bool, error) {
	var got bool
	err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+lockKey+`)`, name).Scan(&got)
	return got, err
}

// endStale ends the session of name's holder if its heartbeat is older
// than the TTL, and reports whether it did. One statement finds the
// backend holding the lock, checks the heartbeat its row stamped and
// terminates it, waiting up to 10 s for it to exit: a holder that stamps
// meanwhile is spared, and a lock whose row names another backend (a
// holder between its lock and its row) is left alone. Times are the
// server's, so the machines' clocks need not agree.
func (d *DB) endStale(ctx context.Context, conn *pgx.Conn, name string) (bool, error) {
	rows, err := conn.Query(ctx, `SELECT pg_terminate_backend(k.pid, 10000)
		FROM pg_locks k JOIN leases l ON l.backend = k.pid AND l.name = $1
		WHERE `+heldBy+` AND l.heartbeat < clock_timestamp() - make_interval(secs => $2)`, name, d.ttl.Seconds())
	if err != nil {
		return false, fmt.Errorf("take over a stale holder: %w", err)
	}
	ended, err := pgx.CollectRows(rows, pgx.RowTo[bool])
	if err != nil {
		return false, fmt.Errorf("take over a stale holder: %w", err)
	}
	return len(ended) > 0 && ended[0], nil
}

// heartbeat stamps the lease every TTL/3; a failed stamp means the
// connection, and with it the lock, is gone.
func (l *Lease) heartbeat() {
	defer close(l.done)
	every := l.db.ttl / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if l.paused.Load() {
			continue
		}
		l.mu.Lock()
		ctx, cancel := context.WithTimeout(context.Background(), every)
		_, err := l.conn.Exec(ctx, `UPDATE leases SET heartbeat = now() WHERE name = $1 AND backend = pg_backend_pid()`, l.name)
		cancel()
		l.mu.Unlock()
		if err != nil {
			l.markLost()
			return
		}
	}
}

func (l *Lease) markLost() { l.lostOnce.Do(func() { close(l.lost) }) }

// Lost is closed once the lease is known to be gone (its connection
// failed): its holder must stop driving, as another may have taken over.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Release gives the lease up and closes its connection. Releasing twice
// is harmless.
func (l *Lease) Release() {
	select {
	case <-l.stop:
		return
	default:
	}
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The row goes first, while this connection still proves it is the
	// holder's; then the lock, explicitly: closing the connection frees it
	// too, but only once the server process has exited, a moment after
	// Close returns, and a Release must be over when it returns.
	l.conn.Exec(ctx, `DELETE FROM leases WHERE name = $1 AND backend = pg_backend_pid()`, l.name)
	l.conn.Exec(ctx, `SELECT pg_advisory_unlock(`+lockKey+`)`, l.name)
	l.conn.Close(ctx)
}

// Backend is the server process id of the lease's connection: what an
// operator passes to pg_terminate_backend to take the lease away.
func (l *Lease) Backend() (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var pid int
	err := l.conn.QueryRow(context.Background(), `SELECT pg_backend_pid()`).Scan(&pid)
	return pid, err
}

// Store is the store as the leaseholder writes it: every write goes
// through the lease's connection, so it fails once the lease is lost;
// reads use the pool. Its Close does nothing: Release and the DB's Close
// end the lease and the pool.
func (l *Lease) Store() store.Store { return &leased{DB: l.db, l: l} }

type leased struct {
	*DB
	l *Lease
}

// write runs a write on the lease's connection; a connection error marks
// the lease lost.
func (s *leased) write(fn func(*pgx.Conn) error) error {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	err := fn(s.l.conn)
	if err != nil && s.l.conn.IsClosed() {
		s.l.markLost()
		return fmt.Errorf("%w (lease on %s lost: another process may drive it now)", err, s.l.name)
	}
	return err
}

func (s *leased) Commit(ctx context.Context, b store.Batch) error {
	return s.write(func(c *pgx.Conn) error { return commit(ctx, c, b) })
}

func (s *leased) Append(ctx context.Context, entries ...store.Entry) error {
	return s.Commit(ctx, store.Batch{Entries: entries})
}

func (s *leased) PutMeta(ctx context.Context, m store.Meta) error {
	return s.Commit(ctx, store.Batch{Meta: []store.Meta{m}})
}

func (s *leased) PutSummary(ctx context.Context, key, text string) error {
	if key == "" {
		return errors.New("put summary: key is required")
	}
	return s.write(func(c *pgx.Conn) error {
		return write(ctx, c, "put summary "+key, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO summaries (key, text, time) VALUES ($1, $2, $3)`, key, text, column(time.Now()))
			return err
		})
	})
}

func (s *leased) Close() error { return nil }

// heldBy is true of a pg_locks row k that is the advisory lock of lease
// row l's name held by its backend (a bigint key is split over classid,
// the high half, and objid, the low half).
const heldBy = `k.locktype = 'advisory' AND k.granted AND k.objsubid = 1
	AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND ((k.classid::bigint << 32) | k.objid::bigint) = hashtextextended(current_schema() || '/' || l.name, 0)`

// holderQuery reads the lease rows ($2: of that name, NULL: all) with
// whether each is live: its backend still holds the lock, and its
// heartbeat is no older than the TTL ($1, seconds).
const holderQuery = `SELECT l.name, l.host, l.pid, l.since, l.heartbeat,
	EXISTS (SELECT 1 FROM pg_locks k WHERE k.pid = l.backend AND ` + heldBy + `)
	AND l.heartbeat >= clock_timestamp() - make_interval(secs => $1)
	FROM leases l WHERE $2::text IS NULL OR l.name = $2`

// Holder returns who holds name, or held it last: a zero Holder (but for
// its Name) if no one.
func (d *DB) Holder(ctx context.Context, name string) (store.Holder, error) {
	return d.holder(ctx, name)
}

func (d *DB) holder(ctx context.Context, name string) (store.Holder, error) {
	hs, err := d.queryHolders(ctx, &name)
	if err != nil || len(hs) == 0 {
		return store.Holder{Name: name}, err
	}
	return hs[0], nil
}

// Holders lists the lease rows, live or not, by name.
func (d *DB) Holders(ctx context.Context) (map[string]store.Holder, error) {
	hs, err := d.queryHolders(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := make(map[string]store.Holder, len(hs))
	for _, h := range hs {
		out[h.Name] = h
	}
	return out, nil
}

func (d *DB) queryHolders(ctx context.Context, name *string) ([]store.Holder, error) {
	rows, err := d.pool.Query(ctx, holderQuery, d.ttl.Seconds(), name)
	if err != nil {
		return nil, fmt.Errorf("leases: %w", err)
	}
	defer rows.Close()
	var out []store.Holder
	for rows.Next() {
		var h store.Holder
		if err := rows.Scan(&h.Name, &h.Host, &h.PID, &h.Since, &h.Heartbeat, &h.Live); err != nil {
			return nil, fmt.Errorf("leases: %w", err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("leases: %w", err)
	}
	return out, nil
}
