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
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/store"
)

// A lease says which process drives the runs of a workspace. It is a
// PostgreSQL session-level advisory lock, the way GoodJob and Que lease
// jobs, held on the one lease session of the DB that took it (a
// connection out of the pool, shared by all the leases of that DB: a
// worker driving 32 runs holds their 32 locks on one connection). The
// server holds a lock for as long as its session lives, so a process that
// dies, or whose session dies, loses all its leases with no timeout to
// wait for. Writes go through the pool and are fenced: each write
// transaction first checks, under a share lock on the lease's row, that
// the row still names this lease (its session's backend and the time it
// was taken); a takeover rewrites the row, so a holder that lost its
// lease can never write after another took it (doc.go, Leases).

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

// PoolSize caps the connections of the DB's pool, through which all its
// reads and its leases' writes go (pgxpool's default: the larger of 4
// and the number of CPUs), unless the URL sets pool_max_conns. A DB also
// holds one lease session while it holds leases, and one connection per
// Listen.
func PoolSize(n int) Option {
	return func(d *DB) {
		if n > 0 {
			d.poolSize = int32(n)
		}
	}
}

// lockKey is the advisory lock key of name: a hash of the schema and the
// name, so that stores in different schemas of one database do not
// share leases.
const lockKey = `hashtextextended(current_schema() || '/' || $1, 0)`

// ErrLost is the error of a write by a lease's holder after its lease was
// taken over: the write was not made.
var ErrLost = errors.New("lease lost")

// Lease is a held lease: a lock on its DB's lease session and the row
// that names it, (name, backend, since), which fences its writes.
type Lease struct {
	db      *DB
	s       *session
	name    string
	backend int32     // the lease session's server process
	since   time.Time // as the row has it, to the microsecond

	lost     chan struct{} // closed once the lease is known to be gone
	lostOnce sync.Once
	released atomic.Bool
}

// session is the connection of a DB that holds the advisory locks of all
// its leases and stamps their heartbeats. It is never reconnected: once
// it fails, all its leases are lost, and the next Acquire opens another.
type session struct {
	db  *DB
	pid int32

	mu     sync.Mutex // guards conn (one call at a time) and leases
	conn   *pgx.Conn
	leases map[string]*Lease

	paused atomic.Bool   // tests: the heartbeat skips its stamps
	dead   chan struct{} // closed when the session is found dead or closed
	once   sync.Once
	stop   chan struct{}
	done   chan struct{}
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

// Acquire takes the lease on name for this DB, or fails at once with a
// *store.BusyError naming the holder (also when this DB holds it). A
// holder whose heartbeat is older than the TTL is taken over: its lease
// session is ended (pg_terminate_backend), and its locks with it, and
// the row is rewritten, which fences its writes (doc.go, Leases).
func (d *DB) Acquire(ctx context.Context, name string) (*Lease, error) {
	for try := 0; ; try++ {
		s, err := d.session(ctx)
		if err != nil {
			return nil, fmt.Errorf("lease %s: %w", name, err)
		}
		l, err := s.acquire(ctx, name)
		if err != nil && try == 0 && s.isDead() {
			continue // a session that died idle: once more on a new one
		}
		return l, err
	}
}

// session returns the DB's live lease session, opening one if needed.
func (d *DB) session(ctx context.Context) (*session, error) {
	d.smu.Lock()
	defer d.smu.Unlock()
	if d.sess != nil && !d.sess.isDead() {
		return d.sess, nil
	}
	pc, err := d.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	conn := pc.Hijack() // out of the pool: its locks live and die with it
	s := &session{db: d, conn: conn, leases: map[string]*Lease{}, dead: make(chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}
	// The session is shared by every lease of the DB: a caller's
	// cancelled context must not end it, so its calls are bounded by the
	// server instead (a takeover waits at most lock_timeout for a stale
	// holder's writes in flight, pg_terminate_backend at most 10 s).
	err = conn.QueryRow(ctx, `SELECT pg_backend_pid(), set_config('application_name', 'flower lease', false),
		set_config('lock_timeout', '5s', false), set_config('statement_timeout', '30s', false)`).Scan(&s.pid, nil, nil, nil)
	if err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	d.sess = s
	go s.heartbeat()
	return s, nil
}

func (s *session) isDead() bool {
	select {
	case <-s.dead:
		return true
	default:
		return false
	}
}

// acquire takes name's lock on s, taking over a stale holder, and writes
// the lease's row.
func (s *session) acquire(ctx context.Context, name string) (*Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isDead() {
		return nil, fmt.Errorf("lease %s: the lease session is closed", name)
	}
	ctx = context.WithoutCancel(ctx)
	if _, held := s.leases[name]; held {
		return nil, s.busy(ctx, name)
	}
	got, err := tryLock(ctx, s.conn, name)
	if err == nil && !got {
		var ended bool
		if ended, err = s.db.endStale(ctx, s.conn, name); ended {
			got, err = tryLock(ctx, s.conn, name)
		}
	}
	if err != nil {
		s.failed()
		return nil, fmt.Errorf("lease %s: %w", name, err)
	}
	if !got {
		return nil, s.busy(ctx, name)
	}
	// The upsert waits for the share locks of the fenced writes of a
	// holder taken over (at most lock_timeout); once it commits, they fail.
	host, _ := os.Hostname()
	l := &Lease{db: s.db, s: s, name: name, backend: s.pid, lost: make(chan struct{})}
	err = s.conn.QueryRow(ctx, `INSERT INTO leases (name, host, pid, backend, since, heartbeat)
		VALUES ($1, $2, $3, pg_backend_pid(), clock_timestamp(), now())
		ON CONFLICT (name) DO UPDATE SET host = excluded.host, pid = excluded.pid, backend = excluded.backend,
		since = excluded.since, heartbeat = excluded.heartbeat
		RETURNING since`, name, host, os.Getpid()).Scan(&l.since)
	if err != nil {
		s.conn.Exec(ctx, `SELECT pg_advisory_unlock(`+lockKey+`)`, name)
		s.failed()
		return nil, fmt.Errorf("lease %s: %w", name, err)
	}
	s.leases[name] = l
	return l, nil
}

// busy is the refusal of name, naming its holder.
func (s *session) busy(ctx context.Context, name string) error {
	h, err := s.db.holder(ctx, name)
	if err != nil {
		return fmt.Errorf("lease %s: %w", name, err)
	}
	h.Live = true
	return &store.BusyError{Holder: h}
}

// failed ends the session if its connection is gone (s.mu held).
func (s *session) failed() {
	if s.conn.IsClosed() {
		s.end()
	}
}

// end closes the session and loses its leases (s.mu held).
func (s *session) end() {
	s.once.Do(func() {
		close(s.dead)
		for _, l := range s.leases {
			l.markLost()
		}
		s.conn.Close(context.Background())
	})
}

// close stops the heartbeat and ends the session (DB.Close).
func (s *session) close() {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	s.end()
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

// heartbeat stamps the session's leases every TTL/3, in one statement; a
// failed stamp means the session, and with it every lock, is gone.
func (s *session) heartbeat() {
	defer close(s.done)
	every := s.db.ttl / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if s.paused.Load() {
			continue
		}
		s.mu.Lock()
		names := make([]string, 0, len(s.leases))
		for n := range s.leases {
			names = append(names, n)
		}
		_, err := s.conn.Exec(context.Background(), `UPDATE leases SET heartbeat = now()
			WHERE name = ANY($1) AND backend = pg_backend_pid()`, names)
		if err != nil {
			s.end()
		}
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (l *Lease) markLost() { l.lostOnce.Do(func() { close(l.lost) }) }

// Lost is closed once the lease is known to be gone (its session failed,
// or a write found it taken over): its holder must stop driving, as
// another may have taken over.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Release gives the lease up: its row and its lock. Releasing twice is
// harmless.
func (l *Lease) Release() {
	if l.released.Swap(true) {
		return
	}
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leases[l.name] == l {
		delete(s.leases, l.name)
	}
	if s.isDead() {
		return
	}
	// The row goes first, while the lock still proves this is the
	// holder's; then the lock, explicitly: the session lives on for the
	// DB's other leases.
	ctx := context.Background()
	_, err := s.conn.Exec(ctx, `DELETE FROM leases WHERE name = $1 AND backend = pg_backend_pid() AND since = $2`, l.name, l.since)
	if err == nil {
		_, err = s.conn.Exec(ctx, `SELECT pg_advisory_unlock(`+lockKey+`)`, l.name)
	}
	if err != nil {
		s.failed()
	}
}

// Backend is the server process id of the lease's session: what an
// operator passes to pg_terminate_backend to take the lease away (and
// every other lease of the same DB with it).
func (l *Lease) Backend() (int, error) { return int(l.backend), nil }

// Store is the store as the leaseholder writes it: every write is fenced
// (it fails, and closes Lost, once the lease was taken over); reads and
// writes go through the pool. Its Close does nothing: Release and the
// DB's Close end the lease and the pool.
func (l *Lease) Store() store.Store { return &leased{DB: l.db, l: l} }

type leased struct {
	*DB
	l *Lease
}

// fenceSQL fails (division_by_zero, fenceFailed) unless the lease's row
// still names the lease and the lease's lock is held; its share lock on
// the row holds until the write's transaction ends, so a takeover's
// rewrite of the row waits for the write, and a write after the takeover
// fails. The lock is checked too because the takeover comes after the
// stale holder's session ends: in between, a holder whose session was
// ended (pg_terminate_backend, a stall past the TTL) and that goes on
// writing, recording the tool call its lost lease cut, say, must already
// be refused, as when its writes rode that very session.
//
// The lock is checked by trying to take it for the write's transaction:
// that fails while any session holds it, and succeeds (and the fence then
// fails, ending the transaction and the lock) once its holder's session
// is gone. One lookup in the server's lock table, where reading pg_locks
// copied the whole table: a third of the server's time in statements at
// 64 runs (issue 19). While a takeover has the lock but has not yet
// rewritten the row, a write of the old holder passes and commits before
// the rewrite, which waits for it: still before the new holder's lease
// exists (doc.go, Fencing).
//
// The try is outside the subquery, which OFFSET 0 keeps the planner from
// merging with it: it is made only once the row matched and is share
// locked.
const fenceSQL = `SELECT 1 / count(*)::int FROM
	(SELECT 1 FROM leases l WHERE l.name = $1 AND l.backend = $2 AND l.since = $3 FOR SHARE OF l OFFSET 0) f
	WHERE NOT pg_try_advisory_xact_lock(` + lockKey + `)`

// fenceFailed is the SQLSTATE of a failed fence: division_by_zero.
const fenceFailed = "22012"

// fence is what a fenced write checks: the lease's row.
func (l *Lease) fence() []any { return []any{l.name, l.backend, l.since} }

// lostErr is the error of a write the fence refused: it closes Lost.
func (l *Lease) lostErr(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != fenceFailed {
		return err
	}
	l.markLost()
	return fmt.Errorf("%w: lease on %s lost: another process may drive it now", ErrLost, l.name)
}

func (s *leased) Commit(ctx context.Context, b store.Batch) error {
	return s.l.lostErr(commit(ctx, s.pool, b, s.l))
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
	// The fence and the insert are one pipeline: one round trip, one
	// implicit transaction, as a commit's.
	b := &pgx.Batch{}
	b.Queue(fenceSQL, s.l.fence()...)
	b.Queue(putSummary, key, text, column(time.Now()))
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return s.l.lostErr(fmt.Errorf("put summary %s: %w", key, err))
	}
	failpoint.Durable("commit put summary " + key)
	return nil
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

// PauseHeartbeat stops the heartbeat stamps of the DB's lease session
// until resume is called: its holder looks stopped (SIGSTOP) to every
// other process, while it goes on working, so that tests and drills can
// watch a takeover and the stale holder's fenced writes fail.
func (d *DB) PauseHeartbeat(ctx context.Context) (resume func(), err error) {
	s, err := d.session(ctx)
	if err != nil {
		return nil, err
	}
	s.paused.Store(true)
	return func() { s.paused.Store(false) }, nil
}
