package sqlite

import (
	"database/sql"

	"github.com/flower-run/flower/store/internal/rows"
)

// Exported for the external tests of this package only.
var PrefixEnd = prefixEnd

// RawDB is the connection pool under d, to inspect connection settings.
func RawDB(d *DB) *sql.DB { return d.db }

// Codecs of the run-state records, for fuzzing.
var (
	EncodeRun    = encodeRun
	DecodeRun    = rows.DecodeRun
	EncodeResult = encodeResult
	DecodeResult = rows.DecodeResult
)

// Queries are the queries of the statements whose plans tests check, by
// the statement's field name.
func Queries() map[string]string {
	var s statements
	names := map[**sql.Stmt]string{
		&s.lastEntry: "lastEntry", &s.loadEntries: "loadEntries", &s.getRun: "getRun", &s.runsOf: "runsOf",
		&s.lineage: "lineage", &s.resultsOf: "resultsOf",
	}
	out := map[string]string{}
	for _, p := range s.all() {
		if name, ok := names[p.dst]; ok {
			out[name] = p.query
		}
	}
	return out
}
