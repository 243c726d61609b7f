package rows

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/internal/codec"
)

// Tx is one transaction of either driver, as Move uses it: SQLite's
// *sql.Tx and pgx.Tx behind a small adapter each.
type Tx interface {
	Exec(ctx context.Context, sql string, args ...any) error
	// Query runs sql and scans every row with scan before it returns,
	// so that the transaction's connection is free for the next statement.
	Query(ctx context.Context, sql string, scan func(Rows) error, args ...any) error
}

// moveSQL are Move's statements, with PostgreSQL's $N parameters (SQLite
// reads them too). Keys of a workspace are compared as a range, [$1, $2):
// LIKE would take the '_' and '%' of a path for wildcards.
var moveSQL = struct {
	holds, workspaces, metaBodies, entries, entry, metas, dropMeta, meta, summaries, events, runs, run, threads, bindings string
}{
	workspaces: `SELECT DISTINCT workspace FROM runs UNION SELECT workspace FROM threads`,
	metaBodies: `SELECT body FROM meta WHERE key >= $1 AND key < $2`,
	holds: `SELECT EXISTS (SELECT 1 FROM threads WHERE workspace = $3)
		OR EXISTS (SELECT 1 FROM runs WHERE workspace = $3)
		OR EXISTS (SELECT 1 FROM meta WHERE key >= $1 AND key < $2)
		OR EXISTS (SELECT 1 FROM entries WHERE key >= $1 AND key < $2)`,
	entries:   `SELECT seq, body FROM entries WHERE key >= $1 AND key < $2`,
	entry:     `UPDATE entries SET key = $1, body = $2 WHERE seq = $3`,
	metas:     `SELECT key, created, updated, body FROM meta WHERE key >= $1 AND key < $2`,
	dropMeta:  `DELETE FROM meta WHERE key >= $1 AND key < $2`,
	meta:      `INSERT INTO meta (key, created, updated, body) VALUES ($1, $2, $3, $4)`,
	summaries: `UPDATE summaries SET key = $3 || substr(key, $4) WHERE key >= $1 AND key < $2`,
	events:    `UPDATE events SET stream = $3 || substr(stream, $4) WHERE stream >= $1 AND stream < $2`,
	runs:      `SELECT id, body FROM runs WHERE workspace = $1`,
	run:       `UPDATE runs SET workspace = $1, body = $2 WHERE id = $3`,
	threads:   `UPDATE threads SET workspace = $2 WHERE workspace = $1`,
	bindings:  `UPDATE bindings SET workspace = $2 WHERE workspace = $1`,
}

// Move re-keys workspace from's records to to in tx (store.Mover). Entry
// and meta bodies name their key, and run bodies their workspace, so
// those rows are rewritten whole; the rest is renamed in place.
func Move(ctx context.Context, tx Tx, from, to string) error {
	lo, hi := keyRange(from)
	// substr counts characters, in both databases, not bytes.
	rest := utf8.RuneCountInString(lo) + 1
	if held, err := holds(ctx, tx, from); err != nil || !held {
		return err
	}
	if held, err := holds(ctx, tx, to); err != nil || held {
		if err == nil {
			err = store.ErrMoveTarget
		}
		return err
	}
	if other, err := sharer(ctx, tx, from); err != nil || other != "" {
		if err == nil {
			err = fmt.Errorf("%w: %s", store.ErrMoveShared, other)
		}
		return err
	}
	steps := []func() error{
		func() error { return moveEntries(ctx, tx, from, to) },
		func() error { return moveMeta(ctx, tx, from, to) },
		func() error {
			return tx.Exec(ctx, moveSQL.summaries, lo, hi, store.ProjectKey(to)+"/", rest)
		},
		func() error { return tx.Exec(ctx, moveSQL.events, lo, hi, store.ProjectKey(to)+"/", rest) },
		func() error { return moveRuns(ctx, tx, from, to) },
		func() error { return tx.Exec(ctx, moveSQL.threads, from, to) },
		func() error { return tx.Exec(ctx, moveSQL.bindings, from, to) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// keyRange is the range of the keys of workspace ws: its project key and
// a slash, up to the same with the slash's successor.
func keyRange(ws string) (lo, hi string) {
	p := store.ProjectKey(ws)
	return p + "/", p + "0" // '0' follows '/'
}

// sharer is a workspace other than ws whose records share ws's keys
// (store.SharesKeys), or "": one with runs or a lineage, or named by a
// session's meta under ws's keys.
func sharer(ctx context.Context, tx Tx, ws string) (string, error) {
	other := ""
	keep := func(w string) {
		if other == "" && store.SharesKeys(ws, w) {
			other = w
		}
	}
	err := tx.Query(ctx, moveSQL.workspaces, func(r Rows) error {
		var w string
		err := r.Scan(&w)
		keep(w)
		return err
	})
	if err != nil || other != "" {
		return other, err
	}
	lo, hi := keyRange(ws)
	err = tx.Query(ctx, moveSQL.metaBodies, func(r Rows) error {
		var body string
		if err := r.Scan(&body); err != nil {
			return err
		}
		var m store.Meta
		if json.Unmarshal([]byte(body), &m) == nil {
			keep(m.Workspace)
		}
		return nil
	}, lo, hi)
	return other, err
}

func holds(ctx context.Context, tx Tx, ws string) (bool, error) {
	lo, hi := keyRange(ws)
	var held bool
	err := tx.Query(ctx, moveSQL.holds, func(r Rows) error { return r.Scan(&held) }, lo, hi, ws)
	return held, err
}

func moveEntries(ctx context.Context, tx Tx, from, to string) error {
	type row struct {
		seq  int64
		body []byte
	}
	var rs []row
	lo, hi := keyRange(from)
	err := tx.Query(ctx, moveSQL.entries, func(r Rows) error {
		var x row
		err := r.Scan(&x.seq, &x.body)
		rs = append(rs, x)
		return err
	}, lo, hi)
	if err != nil {
		return fmt.Errorf("entries: %w", err)
	}
	for _, x := range rs {
		e, err := codec.DecodeEntry(x.seq, string(x.body))
		if err != nil {
			return err
		}
		e.Key, _ = store.MovedKey(e.Key, from, to)
		body, err := codec.AppendEntry(nil, &e)
		if err == nil {
			err = tx.Exec(ctx, moveSQL.entry, e.Key, body, x.seq)
		}
		if err != nil {
			return fmt.Errorf("entry %d: %w", x.seq, err)
		}
	}
	return nil
}

func moveMeta(ctx context.Context, tx Tx, from, to string) error {
	var rows [][4]string
	lo, hi := keyRange(from)
	err := tx.Query(ctx, moveSQL.metas, func(r Rows) error {
		var x [4]string
		err := r.Scan(&x[0], &x[1], &x[2], &x[3])
		rows = append(rows, x)
		return err
	}, lo, hi)
	if err == nil {
		err = tx.Exec(ctx, moveSQL.dropMeta, lo, hi)
	}
	if err != nil {
		return fmt.Errorf("meta: %w", err)
	}
	for _, x := range rows {
		var m store.Meta
		if err := json.Unmarshal([]byte(x[3]), &m); err != nil {
			return fmt.Errorf("meta %s: %w", x[0], err)
		}
		m.Key, _ = store.MovedKey(x[0], from, to)
		if m.Workspace == from {
			m.Workspace = to
		}
		if k, ok := store.MovedKey(m.ForkOf, from, to); ok {
			m.ForkOf = k
		}
		body, _ := json.Marshal(m) // a Meta always encodes
		if err := tx.Exec(ctx, moveSQL.meta, m.Key, x[1], x[2], string(body)); err != nil {
			return fmt.Errorf("meta %s: %w", m.Key, err)
		}
	}
	return nil
}

func moveRuns(ctx context.Context, tx Tx, from, to string) error {
	var runs []store.Run
	err := tx.Query(ctx, moveSQL.runs, func(r Rows) error {
		run, err := Run(r)
		runs = append(runs, run)
		return err
	}, from)
	if err != nil {
		return fmt.Errorf("runs: %w", err)
	}
	for _, r := range runs {
		r.Workspace = to
		body, _ := json.Marshal(r) // a Run always encodes
		if err := tx.Exec(ctx, moveSQL.run, to, string(body), r.ID); err != nil {
			return fmt.Errorf("run %s: %w", r.ID, err)
		}
	}
	return nil
}
