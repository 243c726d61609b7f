package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/store"
)

var _ store.Store = (*DB)(nil)

// DB is a session store in a PostgreSQL database (the first schema of the
// connection's search_path). It is safe for concurrent use, also by many
// processes on many machines.
type DB struct {
	pool     *pgxpool.Pool
	where    string        // the URL without its password, for error texts
	ttl      time.Duration // of the leases it takes and judges (LeaseTTL)
	poolSize int32         // PoolSize; 0: pgxpool's default

	smu  sync.Mutex // guards sess
	sess *session   // the lease session, once a lease was taken

	events eventGroup // AppendEvents' group commit
}

// IsURL reports whether s names a PostgreSQL store (postgres:// or
// postgresql://), as --store and FLOWER_STORE take it.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Open connects to the database at url, creating flower's tables if they
// are missing and upgrading older ones. A schema that is not a session
// store is refused with an error wrapping store.ErrNotStore; a store of
// another version with one wrapping store.ErrSchema.
func Open(ctx context.Context, url string, opts ...Option) (*DB, error) {
	d, err := connect(ctx, url, opts...)
	if err != nil {
		return nil, err
	}
	if err := d.migrate(ctx); err != nil {
		d.pool.Close()
		return nil, openError(d.where, err)
	}
	return d, nil
}

// TTLEnv names the environment variable that sets the lease TTL of every
// DB a process opens (a duration, e.g. 10s), unless Open is given
// LeaseTTL: one setting for all the flower processes sharing a database,
// which must agree on it.
const TTLEnv = "FLOWER_LEASE_TTL"

// connect makes the pool and checks that the server answers.
func connect(ctx context.Context, rawURL string, opts ...Option) (*DB, error) {
	d := &DB{where: redact(rawURL), ttl: DefaultTTL, events: eventGroup{token: make(chan struct{}, 1)}}
	if v, err := time.ParseDuration(os.Getenv(TTLEnv)); err == nil && v > 0 {
		d.ttl = v
	}
	for _, o := range opts {
		o(d)
	}
	where := d.where
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", where, err)
	}
	if d.poolSize > 0 && !strings.Contains(rawURL, "pool_max_conns") {
		cfg.MaxConns = d.poolSize
	}
	tune(cfg.ConnConfig)
	// A transaction left open by a stopped process would hold its share
	// lock on a lease row, and a takeover would wait for it (lease.go):
	// the server ends such a session after a TTL.
	if _, ok := cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"]; !ok {
		cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = fmt.Sprint(d.ttl.Milliseconds())
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", where, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store %s: %w", where, err)
	}
	d.pool = pool
	return d, nil
}

// tune sets what a lease's failover time depends on, unless the URL says
// otherwise: a connect timeout, and TCP keepalive probes so that a worker
// whose machine vanished is noticed by the server within about
// 10 + 3*5 = 25 s, and its advisory locks freed (see doc.go, Failover).
func tune(c *pgx.ConnConfig) {
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = 10 * time.Second
	}
	for k, v := range map[string]string{
		"tcp_keepalives_idle":     "10",
		"tcp_keepalives_interval": "5",
		"tcp_keepalives_count":    "3",
		// Data unacknowledged this long ends the session too: keepalives
		// are only sent on an idle connection.
		"tcp_user_timeout": "25000",
		"application_name": "flower",
		// A commit is durable when Commit returns, whatever the server's
		// default says (DESIGN.md §3).
		"synchronous_commit": "on",
	} {
		if _, ok := c.RuntimeParams[k]; !ok {
			c.RuntimeParams[k] = v
		}
	}
}

// redact is url without its password. A URL that does not parse is shown
// as its scheme only.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	return u.Redacted()
}

// String names the store for people: its URL without the password.
func (d *DB) String() string { return d.where }

// Close ends the lease session, losing every lease still held, and
// closes the pool. Closing twice is harmless.
func (d *DB) Close() error {
	d.smu.Lock()
	s := d.sess
	d.sess = nil
	d.smu.Unlock()
	if s != nil {
		s.close()
	}
	d.pool.Close()
	return nil
}

// exec1 runs one write statement, its own transaction: one round trip
// where BEGIN, the statement and COMMIT took three. The commit is durable
// when the server acknowledges it (synchronous_commit on: the WAL record
// is flushed first).
func exec1(ctx context.Context, pool *pgxpool.Pool, op, sql string, args ...any) error {
	if _, err := pool.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	failpoint.Durable("commit " + op)
	return nil
}

// uniqueViolation reports whether err is PostgreSQL's unique_violation.
func uniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
