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
//	│ body   │ BLOB NOT NULL                       │ the Entry, below: truth    │
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
// To read whole entries, `flower show --raw SESSION` prints each as JSON.
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
