// Package sqlite is the embedded session store: one SQLite file,
// <run dir>/sessions.db, written through the pure-Go driver
// modernc.org/sqlite so that flower builds without cgo (R2.7).
//
// Several flower processes may open the same file. Every connection runs in
// WAL mode with synchronous=FULL, so a commit is fsync'd before Commit (or
// Append, a Commit of entries only) returns, and with a busy timeout, so writers from other processes queue
// instead of failing. Write transactions begin IMMEDIATE: a writer takes the
// write lock before it reads anything, which rules out the lock-upgrade
// deadlock a deferred transaction can hit.
//
// # On-disk format
//
// On-disk format: change only with a SchemaVersion bump (store.SchemaVersion,
// kept in PRAGMA user_version and written in the same transaction as the
// tables, so a file either has both or neither). This is version 3: the
// tables of version 1 (entries, meta, summaries, entries_key_seq,
// summaries_key_id), since issue 9 (version 2) the run state (runs,
// threads, bindings, results) and entries_key_kind_seq, and since issue 14
// (version 3) the event log (events).
//
//	PRAGMA user_version = store.SchemaVersion   (3)
//
//	entries                               append-only: never updated or deleted
//	┌────────┬─────────────────────────────────────┬────────────────────────────┐
//	│ seq    │ INTEGER PRIMARY KEY AUTOINCREMENT   │ append order, never reused │
//	│ key    │ TEXT NOT NULL                       │ project_key/session[/sub]  │
//	│ uuid   │ TEXT NOT NULL UNIQUE                │ Entry.UUID                 │
//	│ parent │ TEXT                                │ Entry.Parent, NULL if none │
//	│ kind   │ TEXT NOT NULL                       │ Entry.Kind                 │
//	│ time   │ TEXT NOT NULL                       │ UTC, fixed-width RFC 3339  │
//	│ body   │ BLOB NOT NULL                       │ the Entry, below: truth    │
//	└────────┴─────────────────────────────────────┴────────────────────────────┘
//	INDEX entries_key_seq ON entries(key, seq)                Load
//	INDEX entries_key_kind_seq ON entries(key, kind, seq)     Last: a seek, not a scan (v2)
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
//	runs (v2)                             a run's state: upserted by id, whole
//	┌───────────┬───────────────────────────────────┬───────────────────────────┐
//	│ seq       │ INTEGER PRIMARY KEY AUTOINCREMENT │ first write: Runs' order  │
//	│ id        │ TEXT NOT NULL UNIQUE              │ Run.ID                    │
//	│ workspace │ TEXT NOT NULL                     │ Run.Workspace             │
//	│ status    │ TEXT NOT NULL                     │ Run.Status                │
//	│ created   │ TEXT NOT NULL                     │ Run.Created               │
//	│ updated   │ TEXT NOT NULL                     │ Run.Updated               │
//	│ body      │ TEXT NOT NULL                     │ JSON of the Run: truth    │
//	└───────────┴───────────────────────────────────┴───────────────────────────┘
//	INDEX runs_workspace_seq ON runs(workspace, seq)
//
//	threads (v2)                          a workspace's current thread: upserted
//	┌───────────┬──────────────────────┬────────────────────────────────────────┐
//	│ workspace │ TEXT PRIMARY KEY     │ Lineage.Workspace                      │
//	│ thread    │ INTEGER NOT NULL     │ +1 on Archive (/new), from 0           │
//	│ woke      │ INTEGER NOT NULL     │ +1 on Wake, 0 on Archive               │
//	└───────────┴──────────────────────┴────────────────────────────────────────┘
//
//	bindings (v2)                         append-only: never updated or deleted
//	┌───────────┬───────────────────────────────────┬───────────────────────────┐
//	│ seq       │ INTEGER PRIMARY KEY AUTOINCREMENT │ commit order              │
//	│ workspace │ TEXT NOT NULL                     │ Binding.Workspace         │
//	│ thread    │ INTEGER NOT NULL                  │ threads.thread when bound │
//	│ step      │ TEXT NOT NULL                     │ Binding.Step              │
//	│ session   │ TEXT NOT NULL                     │ Binding.Session           │
//	│ time      │ TEXT NOT NULL                     │ wall time of the Commit   │
//	└───────────┴───────────────────────────────────┴───────────────────────────┘
//	INDEX bindings_workspace_thread_seq ON bindings(workspace, thread, seq)
//
//	results (v2)                          manifest rows: upserted by (run, step)
//	┌──────┬───────────────────────────────────┬────────────────────────────────┐
//	│ seq  │ INTEGER PRIMARY KEY AUTOINCREMENT │ first write: Results' order    │
//	│ run  │ TEXT NOT NULL                     │ StepResult.Run                 │
//	│ step │ TEXT NOT NULL                     │ StepResult.Step (work#round2)  │
//	│ body │ TEXT NOT NULL                     │ JSON of the StepResult: truth  │
//	└──────┴───────────────────────────────────┴────────────────────────────────┘
//	UNIQUE (run, step); INDEX results_run_seq ON results(run, seq)
//
//	events (v3)                           append-only; WITHOUT ROWID
//	┌────────┬──────────────────┬─────────────────────────────────────────────┐
//	│ stream │ TEXT NOT NULL    │ store.Event.Stream: a run, a serve stream   │
//	│ seq    │ INTEGER NOT NULL │ the publisher's number, from 1              │
//	│ kind   │ TEXT NOT NULL    │ the event's kind                            │
//	│ time   │ TEXT NOT NULL    │ when it was published                       │
//	│ body   │ TEXT NOT NULL    │ JSON of the event as the API sends it       │
//	└────────┴──────────────────┴─────────────────────────────────────────────┘
//	PRIMARY KEY (stream, seq); a stored (stream, seq) is skipped on insert
//
// Events are written through a second pool of one connection with
// synchronous NORMAL (events.go): its commits append to the WAL without an
// fsync, and the next commit of the main pool (synchronous FULL) makes them
// durable with its own fsync of the WAL. Events thus cost the run no fsync;
// a power failure may lose the latest ones, never corrupt the file.
//
// The body column holds everything an entry says; the other columns copy
// the fields a person or a query needs (sqlite3 sessions.db 'select kind,
// time from entries where key = ...'). Loading decodes the body and takes
// seq from its column. Times in columns have the layout
// 2006-01-02T15:04:05.000000000Z in UTC so that text order is time order.
// To read whole entries, `flower show --raw SESSION` prints each as JSON.
//
// # Commits per turn (issue 12)
//
// Every Commit is one fsync of the WAL. The agent loop (package agent,
// "Group commit") makes a tool turn cost one commit for the model's
// response with the intents of its effects, plus one per effect's result;
// the results of pure and world calls ride with the next commit, at the
// latest the next response's. The last result's fsync is not overlapped
// with the next request in a goroutine: it is not made at all, which is
// cheaper, and the crash argument is the same one: the model may be asked
// over results that are not durable yet, but its response commits in one
// transaction with them, so a durable response never rests on results the
// store lacks. A crash during that model call leaves the pure calls
// without a result and without an intent: resume plans them as pending
// (never ambiguous), runs them again (R5.2: safe to re-run) and repeats the
// request, exactly as after a crash before any commit of theirs. An
// effect's result is never held: a completed effect must not be run again.
//
// # Creating a store (issue 12)
//
// A new store costs one fsync, two when its directory is new (create.go).
// Open builds the whole file in a temporary file beside the store's path
// (sessions.db.new-*): every table and index, user_version, and WAL mode,
// which is the version bytes of the file's header. That connection runs
// without a journal and without syncs (journal_mode OFF, synchronous OFF):
// no other process can see the file, and a crash leaves only a temporary
// file that nothing opens again. The finished file is fsync'd once, then
// hard-linked to the store's path, which fails if a file is there: of two
// processes creating a store at once one links first and the other opens
// its store. The path therefore names either nothing or a complete store
// in WAL mode, never an empty or half-built file.
//
// The directory is not synced after the link. SQLite syncs it itself: a
// connection that opens the WAL (with SQLITE_OPEN_CREATE, which every WAL
// open passes) syncs the WAL's directory at its first sync of the WAL
// (os_unix.c, UNIXFILE_DIRSYNC), and the first commit is such a sync. The
// WAL and the store are in one directory, so the link is durable before
// the first commit returns; a crash before that loses at most the link to
// an empty store, and the next Open creates it again. A new directory's
// own name is still made durable by syncing its parent (mkdirSynced).
//
// Before, the empty file was created and its directory synced, the first
// connection switched it to WAL in a rollback-journal transaction (four
// fsyncs: the journal twice, its directory, the file) and the schema was a
// WAL commit of its own. A file that exists (an older flower's empty file,
// a file a file system without hard links made) takes that path still:
// probe, then migrate.
//
// # Run state
//
// Commit writes a store.Batch in one transaction, in the order Archive,
// Wake, Bind, Run, Results, Entries, so a workflow transition and the
// entries behind it are durable together (DESIGN.md §3.7). A lineage is
// read, not stored: the threads row of the workspace and the bindings of
// its current thread, in seq order, folded by store.LineageOf (the newest
// binding of a step is current, the ones it replaced retired), the same
// function store/mem uses. An archive leaves the older threads' bindings in
// place; they are history. Runs and step results are replaced by an upsert
// (ON CONFLICT ... DO UPDATE), which keeps the row and so its seq: a
// replaced result keeps its place in the first-written order. Their bodies
// are JSON: they are small and read rarely, and sqlite3 shows them as they
// are. A body that does not decode, lacks its identifying fields or names
// another row than its own is an error naming the record, never a panic
// (FuzzDecodeRun, FuzzDecodeResult).
//
// # Migration
//
// A store of an older version is upgraded when it is opened; a newer one
// (the next version included) is refused with store.ErrSchema and the text
// naming `flower --reset`. The schema is a list of migrations, each taking
// version v to v+1, and a new file runs them all, so a new store and an
// upgraded one have the same tables (TestMigrateV1 compares them). The
// read-only probe only checks the version and tables. The upgrade then runs
// in one IMMEDIATE write transaction that reads user_version itself, runs
// the missing migrations and sets user_version: a crash or a failure leaves
// the old version whole, and of two processes opening an old file at once
// the second waits for the first's commit and finds nothing to do.
// Versions 1 -> 2 and 2 -> 3 only add tables and indexes; no row is
// rewritten (testdata/v1.db and testdata/v2.db are stores written by a
// version-1 and a version-2 flower; TestMigrateV1, TestMigrateV2).
//
// # Entry body
//
// The body is binary, not JSON: resuming a long session decodes every one
// of its entries, and JSON decoding took most of a load (about 340 of 380
// ms for a 10,000-entry session; BENCHMARKS.md). Each string is stored as
// it is, with its length in front, so decoding finds every field without
// scanning or unescaping text.
//
//	body        = version fields
//	version     = 0x01                        bodyVersion; another value is refused
//	fields      = uuid:str parent:str key:str kind:str time:str
//	              text:str model:str stop_reason:str cost:f64 has:u8
//	              [usage] [op] [message]      in this order, each if its bit of has is set
//	has         = bit 0 message, bit 1 op, bit 2 usage; the other bits are 0
//	usage       = input:int output:int cache_read:int cache_creation:int
//	op          = id:str tool:str input:str class:str content:str flags:u8
//	              flags: bit 0 is_error, bit 1 denied, bit 2 cut; the other bits are 0
//	message     = role:str count:uvarint block*count
//	block       = 0x01 text:str                                    text
//	            | 0x02 thinking:str signature:str redacted:str    thinking
//	            | 0x03 id:str name:str input:str                   tool_use
//	            | 0x04 tool_use_id:str content:str is_error:u8     tool_result (0 or 1)
//
//	str         = length:uvarint byte*length  UTF-8 text, or raw JSON for an input
//	uvarint     = unsigned LEB128, at most 10 bytes (encoding/binary's Uvarint)
//	int         = zigzag varint (encoding/binary's Varint)
//	f64         = IEEE 754 binary64, 8 bytes little-endian
//	time        = the bytes of time.Time.MarshalBinary: the instant and its zone offset
//
// An empty input is stored with length 0 and loads as nil. The body ends
// with its last field: a body cut short, with bytes after its end, with an
// unknown block type or bits, or without uuid, key or kind is an error
// naming the entry's seq, and never a panic (FuzzEntryDecode). A change to
// this layout takes a new version byte, and once stores have shipped a
// SchemaVersion bump; nothing has shipped, so the binary body came in
// under SchemaVersion 1.
//
// Reads map the file into memory (PRAGMA mmap_size), so loading does not
// copy every page through a read call. SQLite only reads through the map,
// never writes: durability is unchanged. The cost is that a disk error
// while reading kills the process with SIGBUS instead of returning an
// error; the store is append-only and resumes after a crash, so that is
// accepted.
package sqlite
