package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/internal/rows"
)

// Commit writes a batch in one write transaction, fsync'd when it returns:
// the run-state records and the entries behind them are durable together
// or not at all (DESIGN.md §3.7). The batch is checked and encoded before
// the transaction begins, so a bad record costs no lock. The parts are
// applied in the order store.Batch gives: Archive, Wake, Bind, Run,
// Results, Entries.
func (d *DB) Commit(ctx context.Context, b store.Batch) error {
	if b.Empty() {
		return nil
	}
	w, err := encodeBatch(b)
	if err != nil {
		return err
	}
	if w.entriesOnly() { // an Append: its error texts
		return d.write(ctx, "append entries", func(tx *sql.Tx) error { return d.insertEntries(ctx, tx, w.entries) })
	}
	return d.write(ctx, "commit", func(tx *sql.Tx) error {
		if err := d.applyRuns(ctx, tx, w); err != nil {
			return err
		}
		if err := d.insertEntries(ctx, tx, w.entries); err != nil {
			return fmt.Errorf("append entries: %w", err)
		}
		return nil
	})
}

// batchRows is a batch turned into column values.
type batchRows struct {
	archive, wake string
	bind          []store.Binding
	run           []any // nil: no run
	results       [][]any
	meta          [][]any
	entries       [][]any
}

func (w *batchRows) entriesOnly() bool {
	return w.archive == "" && w.wake == "" && len(w.bind) == 0 && w.run == nil && len(w.results) == 0 &&
		len(w.meta) == 0
}

// encodeBatch checks a batch as store/mem does and encodes its records.
func encodeBatch(b store.Batch) (*batchRows, error) {
	w := &batchRows{archive: b.Archive, wake: b.Wake, bind: b.Bind}
	var err error
	if w.entries, err = encodeEntries(b.Entries); err != nil {
		return nil, fmt.Errorf("append entries: %w", err)
	}
	if b.Run != nil {
		r := b.Run
		if r.ID == "" || r.Workspace == "" || r.Status == "" {
			return nil, errors.New("commit run: id, workspace and status are required")
		}
		body, err := encodeRun(r)
		if err != nil {
			return nil, fmt.Errorf("commit run %s: %w", r.ID, err)
		}
		w.run = []any{r.ID, r.Workspace, string(r.Status), column(r.Created), column(r.Updated), body}
	}
	for _, x := range b.Bind {
		if x.Workspace == "" || x.Step == "" || x.Session == "" {
			return nil, errors.New("commit binding: workspace, step and session are required")
		}
	}
	for _, r := range b.Results {
		if r.Run == "" || r.Step == "" {
			return nil, errors.New("commit result: run and step are required")
		}
		body, err := encodeResult(&r)
		if err != nil {
			return nil, fmt.Errorf("commit result %s/%s: %w", r.Run, r.Step, err)
		}
		w.results = append(w.results, []any{r.Run, r.Step, body})
	}
	for _, m := range b.Meta {
		row, err := metaRow(m)
		if err != nil {
			return nil, err
		}
		w.meta = append(w.meta, row)
	}
	return w, nil
}

// applyRuns writes the run-state part of w in tx, in the order of
// store.Batch. Statements from tx.StmtContext close with tx.
func (d *DB) applyRuns(ctx context.Context, tx *sql.Tx, w *batchRows) error {
	exec := func(st *sql.Stmt, args ...any) error {
		_, err := tx.StmtContext(ctx, st).ExecContext(ctx, args...)
		return err
	}
	if w.archive != "" {
		if err := exec(d.stmts.archive, w.archive); err != nil {
			return fmt.Errorf("archive %s: %w", w.archive, err)
		}
	}
	if w.wake != "" {
		if err := exec(d.stmts.wake, w.wake); err != nil {
			return fmt.Errorf("wake %s: %w", w.wake, err)
		}
	}
	if len(w.bind) > 0 {
		ensure, bind := tx.StmtContext(ctx, d.stmts.ensureThread), tx.StmtContext(ctx, d.stmts.bind)
		now := column(time.Now())
		for _, x := range w.bind {
			_, err := ensure.ExecContext(ctx, x.Workspace)
			if err == nil {
				_, err = bind.ExecContext(ctx, x.Workspace, x.Step, x.Session, now)
			}
			if err != nil {
				return fmt.Errorf("bind %s to %s: %w", x.Step, x.Session, err)
			}
		}
	}
	if w.run != nil {
		if err := exec(d.stmts.putRun, w.run...); err != nil {
			return fmt.Errorf("put run %s: %w", w.run[0], err)
		}
	}
	if len(w.results) > 0 {
		put := tx.StmtContext(ctx, d.stmts.putResult)
		for _, r := range w.results {
			if _, err := put.ExecContext(ctx, r...); err != nil {
				return fmt.Errorf("put result %s/%s: %w", r[0], r[1], err)
			}
		}
	}
	for _, m := range w.meta {
		if err := exec(d.stmts.putMeta, m...); err != nil {
			return fmt.Errorf("put meta %s: %w", m[0], err)
		}
	}
	return nil
}

// insertEntries appends the encoded entries in tx.
func (d *DB) insertEntries(ctx context.Context, tx *sql.Tx, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	ins := tx.StmtContext(ctx, d.stmts.insertEntry)
	for _, r := range rows {
		if _, err := ins.ExecContext(ctx, r...); err != nil {
			return entryError(err, r)
		}
	}
	return nil
}

// Run returns the run of that id; ok is false if there is none.
func (d *DB) Run(ctx context.Context, id string) (store.Run, bool, error) {
	var col, body string
	err := d.stmts.getRun.QueryRowContext(ctx, id).Scan(&col, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Run{}, false, nil
	}
	if err != nil {
		return store.Run{}, false, fmt.Errorf("run %s: %w", id, err)
	}
	r, err := rows.DecodeRun(col, body)
	if err != nil {
		return store.Run{}, false, fmt.Errorf("run %s: %w", id, err)
	}
	return r, true, nil
}

// Runs lists the runs of workspace ("" for all) in the order they were
// first written: oldest first, as a run is written when it is created.
func (d *DB) Runs(ctx context.Context, workspace string) ([]store.Run, error) {
	st, args := d.stmts.runsAll, []any(nil)
	if workspace != "" {
		st, args = d.stmts.runsOf, []any{workspace}
	}
	rs, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("runs %s: %w", workspace, err)
	}
	defer rs.Close()
	return rows.Collect(rs, "runs "+workspace, rows.Run)
}

// Lineage returns the current thread of workspace, built from its
// bindings by store.LineageOf. One query reads the thread and its bindings,
// so they come from one snapshot.
func (d *DB) Lineage(ctx context.Context, workspace string) (store.Lineage, error) {
	rows, err := d.stmts.lineage.QueryContext(ctx, workspace)
	if err != nil {
		return store.Lineage{}, fmt.Errorf("lineage %s: %w", workspace, err)
	}
	defer rows.Close()
	var thread, woke int
	var bindings []store.Binding
	for rows.Next() {
		var step, session sql.NullString // NULL: a thread without bindings
		if err := rows.Scan(&thread, &woke, &step, &session); err != nil {
			return store.Lineage{}, fmt.Errorf("lineage %s: %w", workspace, err)
		}
		if step.Valid {
			bindings = append(bindings, store.Binding{Workspace: workspace, Step: step.String, Session: session.String})
		}
	}
	if err := rows.Err(); err != nil {
		return store.Lineage{}, fmt.Errorf("lineage %s: %w", workspace, err)
	}
	return store.LineageOf(workspace, thread, woke, bindings), nil
}

// Results returns the step results of run ("" for all runs) in the order
// their rows were first written: a replaced result keeps its place.
func (d *DB) Results(ctx context.Context, run string) ([]store.StepResult, error) {
	st, args := d.stmts.resultsAll, []any(nil)
	if run != "" {
		st, args = d.stmts.resultsOf, []any{run}
	}
	rs, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("results %s: %w", run, err)
	}
	defer rs.Close()
	return rows.Collect(rs, "results "+run, rows.Result)
}

// encodeRun is the body column of a run: its JSON. Runs and results are
// small and read rarely, so JSON, which a person can read with sqlite3,
// costs nothing that matters (entries are binary for their load time).
func encodeRun(r *store.Run) (string, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("encode run: %w", err)
	}
	return string(body), nil
}

// encodeResult is the body column of a step result: its JSON.
func encodeResult(r *store.StepResult) (string, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("encode result: %w", err)
	}
	return string(body), nil
}
