package sqlite

import (
	"database/sql"

	"github.com/flower-run/flower/store"
)

// Exported for the external tests of this package only.
var (
	DecodeEntry = decodeEntry
	PrefixEnd   = prefixEnd
)

// RawDB is the connection pool under d, to inspect connection settings.
func RawDB(d *DB) *sql.DB { return d.db }

// AppendBody is the body encoder, for benchmarks and fuzzing.
func AppendBody(dst []byte, e *store.Entry) ([]byte, error) { return appendBody(dst, e) }
