package sqlite

import "database/sql"

// Exported for the external tests of this package only.
var (
	DecodeEntry = decodeEntry
	PrefixEnd   = prefixEnd
)

// RawDB is the connection pool under d, to inspect connection settings.
func RawDB(d *DB) *sql.DB { return d.db }
