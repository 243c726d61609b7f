package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
)

// Check runs SQLite's own consistency check of the store at path and
// returns the problems it reports; none when the file is sound. quick is
// PRAGMA quick_check: every page and the b-tree structure, without
// comparing each index with its table, which integrity_check (quick
// false) does too. It reads a snapshot and writes nothing: another
// process may go on writing meanwhile. flower doctor uses it (issue 22
// item 2); BENCHMARKS.md says what each costs at 10k entries.
func Check(ctx context.Context, path string, quick bool) ([]string, error) {
	db, err := sql.Open("sqlite", fileURI(path, url.Values{"_pragma": {"busy_timeout(5000)"}, "mode": {"ro"}}))
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", path, err)
	}
	defer db.Close()
	pragma := "PRAGMA integrity_check"
	if quick {
		pragma = "PRAGMA quick_check"
	}
	rows, err := db.QueryContext(ctx, pragma)
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, fmt.Errorf("check %s: %w", path, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("check %s: %w", path, err)
	}
	return problems, nil
}
