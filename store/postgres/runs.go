package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/internal/rows"
)

// Commit writes a batch in one transaction, durable when it returns: the
// run-state records and the entries behind them are committed together or
// not at all (DESIGN.md §3.7). The batch is checked and encoded first, so
// a bad record costs no round trip.
func (d *DB) Commit(ctx context.Context, b store.Batch) error {
	return commit(ctx, d.pool, b, nil)
}

// sender sends a pipeline: the pool, or a connection.
type sender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// commit writes b on s as one pipeline: its statements, in the order of
// store.Batch, go in one round trip and run in one implicit transaction
// (the extended protocol's statements before one Sync), which the server
// commits at the Sync or rolls back whole at the first error. One round
// trip matters: on a loaded machine every trip waits for the server's
// process to be scheduled. A lease's write (l not nil) begins with its
// fence, and its entries name the lease's session as their writer.
func commit(ctx context.Context, s sender, b store.Batch, l *Lease) error {
	if b.Empty() {
		return nil
	}
	w, err := encodeBatch(b)
	if err != nil {
		return err
	}
	op := "commit"
	if w.entriesOnly() {
		op = "append entries"
	}
	var p pipeline
	if l != nil {
		p.add(func(err error) error { return err }, fenceSQL, l.fence()...)
		w.backend = &l.backend
	}
	w.queue(&p, op)
	br := s.SendBatch(ctx, &p.batch)
	for _, label := range p.labels {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return fmt.Errorf("%s: %w", op, label(err))
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("%s: commit: %w", op, err)
	}
	failpoint.Durable("commit " + op)
	return nil
}

// pipeline is a pgx.Batch with, for each statement, how to word its error.
type pipeline struct {
	batch  pgx.Batch
	labels []func(error) error
}

func (p *pipeline) add(label func(error) error, sql string, args ...any) {
	p.batch.Queue(sql, args...)
	p.labels = append(p.labels, label)
}

// as words an error "what: err".
func as(format string, args ...any) func(error) error {
	what := fmt.Sprintf(format, args...)
	return func(err error) error { return fmt.Errorf("%s: %w", what, err) }
}

// batchRows is a batch turned into column values.
type batchRows struct {
	archive, wake string
	bind          []store.Binding
	run           []any // nil: no run
	results       [][]any
	meta          [][]any
	entries       []entryRow
	backend       *int32 // the writer to record in entries.backend; nil: the connection's
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
	if r := b.Run; r != nil {
		if r.ID == "" || r.Workspace == "" || r.Status == "" {
			return nil, errors.New("commit run: id, workspace and status are required")
		}
		body, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("commit run %s: %w", r.ID, err)
		}
		w.run = []any{r.ID, r.Workspace, string(r.Status), column(r.Created), column(r.Updated), string(body)}
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
		body, err := json.Marshal(&r)
		if err != nil {
			return nil, fmt.Errorf("commit result %s/%s: %w", r.Run, r.Step, err)
		}
		w.results = append(w.results, []any{r.Run, r.Step, string(body)})
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

// The run-state statements, as store/sqlite's.
const (
	archiveThread = `INSERT INTO threads (workspace, thread, woke) VALUES ($1, 1, 0)
		ON CONFLICT (workspace) DO UPDATE SET thread = threads.thread + 1, woke = 0`
	wakeThread = `INSERT INTO threads (workspace, thread, woke) VALUES ($1, 0, 1)
		ON CONFLICT (workspace) DO UPDATE SET woke = threads.woke + 1`
	ensureThread = `INSERT INTO threads (workspace, thread, woke) VALUES ($1, 0, 0)
		ON CONFLICT (workspace) DO NOTHING`
	bindStep = `INSERT INTO bindings (workspace, thread, step, session, time)
		SELECT $1, thread, $2, $3, $4 FROM threads WHERE workspace = $1`
	// An upsert keeps the row, and so its seq: Runs and Results list in
	// the order of first writes.
	putRun = `INSERT INTO runs (id, workspace, status, created, updated, body) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET workspace = excluded.workspace, status = excluded.status,
		created = excluded.created, updated = excluded.updated, body = excluded.body`
	putResult = `INSERT INTO results (run, step, body) VALUES ($1, $2, $3)
		ON CONFLICT (run, step) DO UPDATE SET body = excluded.body`
)

// queue adds w's statements to p in the order of store.Batch.
func (w *batchRows) queue(p *pipeline, op string) {
	if w.archive != "" {
		p.add(as("archive %s", w.archive), archiveThread, w.archive)
	}
	if w.wake != "" {
		p.add(as("wake %s", w.wake), wakeThread, w.wake)
	}
	now := column(time.Now())
	for _, x := range w.bind {
		label := as("bind %s to %s", x.Step, x.Session)
		p.add(label, ensureThread, x.Workspace)
		p.add(label, bindStep, x.Workspace, x.Step, x.Session, now)
	}
	if w.run != nil {
		p.add(as("put run %s", w.run[0]), putRun, w.run...)
	}
	for _, r := range w.results {
		p.add(as("put result %s/%s", r[0], r[1]), putResult, r...)
	}
	for _, m := range w.meta {
		p.add(as("put meta %s", m[0]), putMeta, m...)
	}
	for _, r := range w.entries {
		label := func(err error) error {
			if uniqueViolation(err) {
				return fmt.Errorf("uuid %s: %w", r.uuid, store.ErrDuplicate)
			}
			return err
		}
		if op == "commit" {
			label = func(err error) error {
				if uniqueViolation(err) {
					return fmt.Errorf("append entries: uuid %s: %w", r.uuid, store.ErrDuplicate)
				}
				return fmt.Errorf("append entries: %w", err)
			}
		}
		if w.backend != nil {
			p.add(label, insertEntryBy, r.key, r.uuid, r.parent, r.kind, r.time, r.body, *w.backend)
			continue
		}
		p.add(label, insertEntry, r.key, r.uuid, r.parent, r.kind, r.time, r.body)
	}
}

// Run returns the run of that id; ok is false if there is none.
func (d *DB) Run(ctx context.Context, id string) (store.Run, bool, error) {
	var col, body string
	err := d.pool.QueryRow(ctx, `SELECT id, body FROM runs WHERE id = $1`, id).Scan(&col, &body)
	if errors.Is(err, pgx.ErrNoRows) {
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

// Runs lists the runs of workspace ("" for all), oldest first.
func (d *DB) Runs(ctx context.Context, workspace string) ([]store.Run, error) {
	q, args := `SELECT id, body FROM runs ORDER BY seq`, []any(nil)
	if workspace != "" {
		q, args = `SELECT id, body FROM runs WHERE workspace = $1 ORDER BY seq`, []any{workspace}
	}
	return d.queryRuns(ctx, "runs "+workspace, q, args...)
}

// RunsWith returns the runs of that status, oldest first, by the
// status index: what workers look for at every poll, in a database that
// keeps every run ever submitted.
func (d *DB) RunsWith(ctx context.Context, status store.RunStatus) ([]store.Run, error) {
	return d.queryRuns(ctx, "runs "+string(status), `SELECT id, body FROM runs WHERE status = $1 ORDER BY seq`, string(status))
}

// queryRuns decodes the (id, body) rows of q.
func (d *DB) queryRuns(ctx context.Context, what, q string, args ...any) ([]store.Run, error) {
	rs, err := d.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rs.Close()
	return rows.Collect(rs, what, rows.Run)
}

// Lineage returns the current thread of workspace, folded from its
// bindings by store.LineageOf. One query reads the thread and its
// bindings, so they come from one snapshot.
func (d *DB) Lineage(ctx context.Context, workspace string) (store.Lineage, error) {
	rows, err := d.pool.Query(ctx, `SELECT t.thread, t.woke, b.step, b.session FROM threads t
		LEFT JOIN bindings b ON b.workspace = t.workspace AND b.thread = t.thread
		WHERE t.workspace = $1 ORDER BY b.seq`, workspace)
	if err != nil {
		return store.Lineage{}, fmt.Errorf("lineage %s: %w", workspace, err)
	}
	defer rows.Close()
	var thread, woke int
	var bindings []store.Binding
	for rows.Next() {
		var step, session *string // NULL: a thread without bindings
		if err := rows.Scan(&thread, &woke, &step, &session); err != nil {
			return store.Lineage{}, fmt.Errorf("lineage %s: %w", workspace, err)
		}
		if step != nil {
			bindings = append(bindings, store.Binding{Workspace: workspace, Step: *step, Session: *session})
		}
	}
	if err := rows.Err(); err != nil {
		return store.Lineage{}, fmt.Errorf("lineage %s: %w", workspace, err)
	}
	return store.LineageOf(workspace, thread, woke, bindings), nil
}

// WorkspaceResults returns the step results of the runs of workspace ws,
// in the order of their first writes: a run dir's manifest, where the
// store holds the runs of many workspaces.
func (d *DB) WorkspaceResults(ctx context.Context, ws string) ([]store.StepResult, error) {
	rs, err := d.pool.Query(ctx, `SELECT r.run, r.step, r.body FROM results r JOIN runs u ON u.id = r.run
		WHERE u.workspace = $1 ORDER BY r.seq`, ws)
	if err != nil {
		return nil, fmt.Errorf("results of %s: %w", ws, err)
	}
	defer rs.Close()
	return rows.Collect(rs, "results of "+ws, rows.Result)
}

// Results returns the step results of run ("" for all runs) in the order
// their rows were first written.
func (d *DB) Results(ctx context.Context, run string) ([]store.StepResult, error) {
	q, args := `SELECT run, step, body FROM results ORDER BY seq`, []any(nil)
	if run != "" {
		q, args = `SELECT run, step, body FROM results WHERE run = $1 ORDER BY seq`, []any{run}
	}
	rs, err := d.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("results %s: %w", run, err)
	}
	defer rs.Close()
	return rows.Collect(rs, "results "+run, rows.Result)
}
