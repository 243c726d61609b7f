// Package postgres is the session store in a PostgreSQL database, through
// pgx v5, for runs driven from many machines (issue 14). It implements the
// whole store.Store contract and passes store/storetest, as store/sqlite
// does; flower picks it with --store postgres://... or FLOWER_STORE.
//
// The store lives in the first schema of the connection's search_path
// (public by default; ?search_path=flower in the URL gives it a schema of
// its own). Other programs' tables beside flower's are left alone; a table
// of one of flower's names without flower_schema is refused with
// store.ErrNotStore.
//
// # Durability
//
// Every connection sets synchronous_commit=on, so a Commit returns only
// once the server has flushed its WAL record: the same promise as SQLite's
// synchronous=FULL. failpoint.Durable("commit ...") marks each commit, as
// in store/sqlite.
//
// # Schema
//
// Schema: change only with a store.SchemaVersion bump (version 3 here as in
// SQLite), by adding a migration. The version is the one row of
// flower_schema, written in the transaction that creates or upgrades the
// tables, under a transaction-level advisory lock so that two processes
// opening a new database at once do not both create it. A newer version is
// refused with store.ErrSchema. Text columns use collation "C" (byte
// order), so that key ranges and fixed-width UTC times compare as in
// SQLite whatever the database's locale.
//
//	flower_schema (version integer)            one row: store.SchemaVersion
//	entries   (seq bigint identity PK, key, uuid UNIQUE, parent, kind,
//	           time, body bytea, backend)      append-only; backend: the
//	                                           writer's pg_backend_pid()
//	          INDEX (key, seq), (key, kind, seq)
//	meta      (key PK, created, updated, body) JSON of the Meta; upserted
//	summaries (id bigint identity PK, key, text, time)   append-only
//	runs      (seq identity PK, id UNIQUE, workspace, status, created,
//	           updated, body)                  JSON of the Run; upserted
//	threads   (workspace PK, thread, woke)
//	bindings  (seq identity PK, workspace, thread, step, session, time)
//	results   (seq identity PK, run, step, body, UNIQUE (run, step))
//	leases    (name PK, host, pid, backend, since, heartbeat)
//	events    (stream, seq bigint, kind, time, body, PK (stream, seq))   v3
//
// Events are written with SET LOCAL synchronous_commit = off (events.go):
// the commit returns before its WAL record is flushed, and the next commit
// of run state, which waits for its flush, flushes them too. A server
// crash may lose the latest events, never corrupt anything; the run waits
// on no flush for them.
//
// An entry's body is the binary body of store/internal/codec (drawn in
// store/sqlite's doc.go), so an entry has one encoding in both stores and
// loads without JSON decoding; neither store links the other. Runs, results and meta are JSON text, as in SQLite.
//
// The columns and their meaning are those of store/sqlite; seq columns are
// identities, which PostgreSQL hands out in insert order but may leave gaps
// in (a rolled-back insert uses its number up): seqs only order.
package postgres

// # Leases and failover
//
// The driver of a workspace's runs holds a session-level advisory lock
// (pg_try_advisory_lock on a hash of the schema and the workspace). A DB
// takes all its locks on one connection of its own, its lease session,
// taken out of the pool for good: one session can hold many locks, so a
// worker driving 32 runs spends one connection on their leases, not 32
// (issue 19: with a connection per lease, 64 runs on 2 workers used 182
// connections). A second driver is refused at once with a
// *store.BusyError naming the holder, as the run dir's file lock refuses
// one. The lease is per workspace, not per run: a workspace's runs share
// its files and its thread (lineage), so two of its runs must not be
// driven at once anyway. The leases table (name, host, pid, backend,
// since, heartbeat) names each holder; the lease session stamps the
// heartbeats of all its leases every TTL/3 in one UPDATE (LeaseTTL,
// default 30 s: every 10 s), and Holders reports a lease as live when its
// backend still holds the lock (pg_locks) and its heartbeat is no older
// than the TTL.
//
// # Fencing
//
// The writes of a lease (Lease.Store) go through the DB's pool, shared by
// all its runs, and each is fenced: its transaction begins with a
// statement that takes a share lock on the lease's row and fails unless
// the row still names this lease, (name, backend, since), the lease
// session's server process and the instant the lease was taken. Taking a
// lease rewrites the row (an upsert), which waits for the share locks of
// writes in flight; so a write of a holder that lost its lease either
// commits before the new holder's lease exists, or finds the row
// rewritten and fails whole (Lost closes, ErrLost). A holder that lost
// its lease can never write after the takeover, whatever it was doing.
// The row's identity is that pair, never reused in practice (a pid and a
// microsecond), so a release and a new lease by another never revive an
// old holder's fence. entries.backend records the lease session's
// process, so the store still shows which driver wrote what.
//
// The fence also refuses a write once the lease's lock is free (its
// session was ended, and no one has taken over yet): it tries to take the
// lock for the write's transaction, which fails while any session holds
// it. Until a takeover rewrites the row, the lock can be held only by the
// lease's session or by the taker, and a write that passes then commits
// before the rewrite, which waits for its share lock: before the new
// holder's lease exists, as above. (The fence used to look its session up
// in pg_locks, which copies the server's whole lock table: at 64 runs a
// third of the server's time in statements, issue 19.)
//
// The fence costs no round trip (it is the first statement of the
// write's pipeline) and one index lookup, one row lock and one lock-table
// lookup per write. The
// alternative kept in issue 14, every write on the lease's own connection
// (the lock and the ability to write die together), needed a connection
// per run. A transaction left open by a stopped holder would keep its
// share lock and stall a takeover: the pool's connections set
// idle_in_transaction_session_timeout to the TTL, so the server ends such
// a session, and a takeover waits at most lock_timeout (5 s) before it
// gives up until the next claim.
//
// # A holder that stops
//
// A lock lives as long as its session, and a session as long as its
// connection: a holder stopped with SIGSTOP, or hung, keeps both, and with
// the lock alone no one would ever take its runs over (issue 19). So a
// lease whose heartbeat is older than the TTL is taken over: Lease ends
// the stale holder's lease session with pg_terminate_backend, on the
// backend pg_locks says holds the lock, takes the lock once that backend
// has exited, and rewrites the row, which fences the stale holder's
// writes. Check, kill and wait are one statement, judged by the server's
// clock, which stamped the heartbeat: the workers' clocks need not agree.
// Ending the session frees all the stale holder's locks at once: its
// heartbeats were stamped together, so they went stale together, and
// each of its workspaces is taken by the next claim.
//
// The price: the role of a worker must be allowed to end the sessions of
// the role of the others, which holds when all use one role (or grant
// pg_signal_backend), and pg_terminate_backend's wait needs PostgreSQL 14.
//
// The TTL bounds how long a stopped holder blocks its workspace, at the
// price of taking over one that is merely slow: a stamp is one UPDATE, so
// only a process stopped, or starved, for a whole TTL loses its lease.
// Every process sharing a database must use the same TTL: FLOWER_LEASE_TTL
// (TTLEnv) sets it for every DB a process opens, LeaseTTL for one.
//
// Failover time, the time from a driver's death to another's taking its
// workspace, depends on how the driver died:
//
//   - its process died (crash, SIGKILL, OOM): the kernel closes the
//     socket, the server ends the session and frees the lock at once;
//     another worker can take it on its next claim;
//   - it stopped (SIGSTOP, a hang, a paused VM): its heartbeat goes stale,
//     and the next Lease after the TTL, at most TTL + TTL/3 after its last
//     stamp, ends its session and takes over;
//   - an operator ran pg_terminate_backend(backend) (Lease.Backend, or
//     leases.backend): the locks of that session are freed as the backend
//     exits, at once; its heartbeat fails and every lease of the session
//     is Lost, and once another takes one over, the old holder's writes
//     to it fail;
//   - its machine or network vanished: the server notices only through
//     TCP. flower asks for keepalive probes after 10 s idle, every 5 s,
//     3 of them (tcp_keepalives_idle/interval/count, set per connection
//     unless the URL sets them), and tcp_user_timeout 25 s for data left
//     unacknowledged, so the lock is freed about 25 s after the last
//     packet, or earlier by the TTL. Lower them in the URL
//     (?tcp_keepalives_idle=5&...) for a faster failover at the cost of
//     more false ones on a flaky network. Over a Unix socket there is no
//     keepalive, and no vanishing machine either.
//
// A driver cut off from the database cannot commit, so it runs at most
// the one tool call whose intent it had already committed: that op is
// ambiguous and its successor resolves it by the workspace's resume
// policy (R5.7), as after any crash.
