package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
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

// ErrBusy is returned by Lease when another live process holds the lease.
var ErrBusy = errors.New("lease held by another process")

// HeartbeatEvery is how often a lease's holder stamps its heartbeat.
const HeartbeatEvery = 5 * time.Second

// Holder is who holds a lease, as the leases table says.
type Holder struct {
	Name      string // what is leased: a workspace
	Host      string
	PID       int
	Backend   int // the server process of the lease's connection
	Since     time.Time
	Heartbeat time.Time
	Live      bool // the advisory lock is held now
}

// BusyError is a lease refused because another process holds it.
type BusyError struct{ Holder Holder }

func (e *BusyError) Error() string {
	h := e.Holder
	return fmt.Sprintf("%v: flower pid %d on %s has driven %s since %s", ErrBusy, h.PID, h.Host, h.Name, h.Since.Local().Format("15:04:05"))
}

func (e *BusyError) Unwrap() error { return ErrBusy }

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

	lost     chan struct{} // closed when the connection is found dead
	lostOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// Lease takes the lease on name for this process, or fails at once with a
// *BusyError naming the holder.
func (d *DB) Lease(ctx context.Context, name string) (*Lease, error) {
	pc, err := d.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("lease %s: %w", name, err)
	}
	conn := pc.Hijack() // out of the pool: its lock lives and dies with it
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+lockKey+`)`, name).Scan(&got); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("lease %s: %w", name, err)
	}
	if !got {
		conn.Close(context.Background())
		h, _, err := d.holder(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("lease %s: %w", name, err)
		}
		return nil, &BusyError{Holder: h}
	}
	host, _ := os.Hostname()
	_, err = conn.Exec(ctx, `INSERT INTO leases (name, host, pid, backend, since, heartbeat)
		VALUES ($1, $2, $3, pg_backend_pid(), now(), now())
		ON CONFLICT (name) DO UPDATE SET host = excluded.host, pid = excluded.pid, backend = excluded.backend,
		since = excluded.since, heartbeat = excluded.heartbeat`, name, host, os.Getpid())
	if err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("lease %s: %w", name, err)
	}
	l := &Lease{db: d, name: name, conn: conn, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.heartbeat()
	return l, nil
}

// heartbeat stamps the lease every HeartbeatEvery; a failed stamp means
// the connection, and with it the lock, is gone.
func (l *Lease) heartbeat() {
	defer close(l.done)
	t := time.NewTicker(HeartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		ctx, cancel := context.WithTimeout(context.Background(), HeartbeatEvery)
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

// holderQuery reads leases with whether each is live: its backend still
// holds the advisory lock of its name (a bigint key is split over
// classid, the high half, and objid, the low half, in pg_locks).
const holderQuery = `SELECT l.name, l.host, l.pid, l.backend, l.since, l.heartbeat,
	EXISTS (SELECT 1 FROM pg_locks k WHERE k.locktype = 'advisory' AND k.granted AND k.objsubid = 1
		AND k.pid = l.backend AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND ((k.classid::bigint << 32) | k.objid::bigint) = hashtextextended(current_schema() || '/' || l.name, 0))
	FROM leases l`

// holder returns the lease row of name; ok is false if there is none.
func (d *DB) holder(ctx context.Context, name string) (Holder, bool, error) {
	hs, err := d.queryHolders(ctx, holderQuery+` WHERE l.name = $1`, name)
	if err != nil || len(hs) == 0 {
		return Holder{Name: name}, false, err
	}
	return hs[0], true, nil
}

// Holders lists the lease rows, live or not, by name.
func (d *DB) Holders(ctx context.Context) (map[string]Holder, error) {
	hs, err := d.queryHolders(ctx, holderQuery)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Holder, len(hs))
	for _, h := range hs {
		out[h.Name] = h
	}
	return out, nil
}

func (d *DB) queryHolders(ctx context.Context, q string, args ...any) ([]Holder, error) {
	rows, err := d.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("leases: %w", err)
	}
	defer rows.Close()
	var out []Holder
	for rows.Next() {
		var h Holder
		if err := rows.Scan(&h.Name, &h.Host, &h.PID, &h.Backend, &h.Since, &h.Heartbeat, &h.Live); err != nil {
			return nil, fmt.Errorf("leases: %w", err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("leases: %w", err)
	}
	return out, nil
}
