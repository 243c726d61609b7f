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
// Schema: change only with a store.SchemaVersion bump (version 2 here as in
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
//	           time, body bytea)               append-only
//	          INDEX (key, seq), (key, kind, seq)
//	meta      (key PK, created, updated, body) JSON of the Meta; upserted
//	summaries (id bigint identity PK, key, text, time)   append-only
//	runs      (seq identity PK, id UNIQUE, workspace, status, created,
//	           updated, body)                  JSON of the Run; upserted
//	threads   (workspace PK, thread, woke)
//	bindings  (seq identity PK, workspace, thread, step, session, time)
//	results   (seq identity PK, run, step, body, UNIQUE (run, step))
//	leases    (name PK, host, pid, backend, since, heartbeat)
//
// An entry's body is the binary body of store/sqlite (drawn in its doc.go),
// so an entry has one encoding in both stores and loads without JSON
// decoding. Runs, results and meta are JSON text, as in SQLite.
//
// The columns and their meaning are those of store/sqlite; seq columns are
// identities, which PostgreSQL hands out in insert order but may leave gaps
// in (a rolled-back insert uses its number up): seqs only order.
package postgres
