// Package sqlite is the embedded session store: one SQLite file,
// <run dir>/sessions.db, written through the pure-Go driver
// modernc.org/sqlite so that flower builds without cgo (R2.7).
//
// Several flower processes may open the same file. Every connection runs in
// WAL mode with synchronous=FULL, so a commit is fsync'd before Append
// returns, and with a busy timeout, so writers from other processes queue
// instead of failing. Write transactions begin IMMEDIATE: a writer takes the
// write lock before it reads anything, which rules out the lock-upgrade
// deadlock a deferred transaction can hit.
//
// # On-disk format
//
// On-disk format: change only with a SchemaVersion bump (store.SchemaVersion,
// kept in PRAGMA user_version and written in the same transaction as the
// tables, so a file either has both or neither).
//
//	PRAGMA user_version = store.SchemaVersion
//
//	entries                               append-only: never updated or deleted
//	┌────────┬─────────────────────────────────────┬────────────────────────────┐
//	│ seq    │ INTEGER PRIMARY KEY AUTOINCREMENT   │ append order, never reused │
//	│ key    │ TEXT NOT NULL                       │ project_key/session[/sub]  │
//	│ uuid   │ TEXT NOT NULL UNIQUE                │ Entry.UUID                 │
//	│ parent │ TEXT                                │ Entry.Parent, NULL if none │
//	│ kind   │ TEXT NOT NULL                       │ Entry.Kind                 │
//	│ time   │ TEXT NOT NULL                       │ UTC, fixed-width RFC 3339  │
//	│ body   │ TEXT NOT NULL                       │ JSON of the Entry: truth   │
//	└────────┴─────────────────────────────────────┴────────────────────────────┘
//	INDEX entries_key_seq ON entries(key, seq)
//
//	meta                                  a description, not history: upserted
//	┌─────────┬──────────────────┬──────────────────────────────────────────────┐
//	│ key     │ TEXT PRIMARY KEY │ session key                                  │
//	│ created │ TEXT NOT NULL    │ Meta.Created: the order of Sessions          │
//	│ updated │ TEXT NOT NULL    │ wall time of the latest PutMeta              │
//	│ body    │ TEXT NOT NULL    │ JSON of the Meta: truth                      │
//	└─────────┴──────────────────┴──────────────────────────────────────────────┘
//
//	summaries                             append-only; the highest id is current
//	┌──────┬───────────────────────────────────┬────────────────────────────────┐
//	│ id   │ INTEGER PRIMARY KEY AUTOINCREMENT │ append order                   │
//	│ key  │ TEXT NOT NULL                     │ session key                    │
//	│ text │ TEXT NOT NULL                     │ the summary                    │
//	│ time │ TEXT NOT NULL                     │ wall time of the PutSummary    │
//	└──────┴───────────────────────────────────┴────────────────────────────────┘
//	INDEX summaries_key_id ON summaries(key, id)
//
// The body column holds everything an entry says; the other columns copy
// the fields a person or a query needs (sqlite3 sessions.db 'select kind,
// time from entries where key = ...'). Loading decodes the body and takes
// seq from its column. Times in columns have the layout
// 2006-01-02T15:04:05.000000000Z in UTC so that text order is time order.
package sqlite
