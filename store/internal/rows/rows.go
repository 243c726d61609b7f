// Package rows holds what store/sqlite and store/postgres read alike: the
// loop over a query's rows and the decoding of the run, step result and
// event rows their tables share. The Store interface is not involved.
package rows

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/flower-run/flower/store"
)

// Rows is what both drivers' result sets offer: *sql.Rows (SQLite) and
// pgx.Rows (PostgreSQL). The caller closes them.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Collect scans every row with scan. An error of a scan, a decode or the
// query is wrapped with what ("runs ws", "events of s").
func Collect[T any](r Rows, what string, scan func(Rows) (T, error)) ([]T, error) {
	var out []T
	for r.Next() {
		v, err := scan(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// TimeLayout is the layout of time columns: fixed width in UTC,
// nanoseconds kept, so that comparing the text (SQLite's BINARY, or
// PostgreSQL's collation "C") compares the times.
const TimeLayout = "2006-01-02T15:04:05.000000000Z"

// Column is the text of a time column.
func Column(t time.Time) string { return t.UTC().Format(TimeLayout) }

// Run scans an (id, body) row of runs.
func Run(r Rows) (store.Run, error) {
	var id, body string
	if err := r.Scan(&id, &body); err != nil {
		return store.Run{}, err
	}
	return DecodeRun(id, body)
}

// Result scans a (run, step, body) row of results.
func Result(r Rows) (store.StepResult, error) {
	var run, step, body string
	if err := r.Scan(&run, &step, &body); err != nil {
		return store.StepResult{}, err
	}
	return DecodeResult(run, step, body)
}

// Event scans a (seq, kind, time, body) row of events of stream.
func Event(stream string) func(Rows) (store.Event, error) {
	return func(r Rows) (store.Event, error) {
		e := store.Event{Stream: stream}
		var at, body string
		if err := r.Scan(&e.Seq, &e.Kind, &at, &body); err != nil {
			return e, err
		}
		t, err := time.Parse(TimeLayout, at)
		if err != nil {
			return e, fmt.Errorf("seq %d: time %q: %w", e.Seq, at, err)
		}
		e.Time, e.Body = t, []byte(body)
		return e, nil
	}
}

// DecodeRun decodes a runs.body column; id is the row's id column.
// Garbage, a run Commit would have refused, or a body of another run is an
// error naming the run, never a panic.
func DecodeRun(id, body string) (store.Run, error) {
	var r store.Run
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return store.Run{}, fmt.Errorf("decode run %q: %w", id, err)
	}
	switch {
	case r.ID == "" || r.Workspace == "" || r.Status == "":
		return store.Run{}, fmt.Errorf("decode run %q: id, workspace or status missing", id)
	case r.ID != id:
		return store.Run{}, fmt.Errorf("decode run %q: the body is of run %q", id, r.ID)
	}
	return r, nil
}

// DecodeResult decodes a results.body column; run and step are the row's
// columns. Its errors name the run and step, as DecodeRun's do.
func DecodeResult(run, step, body string) (store.StepResult, error) {
	var r store.StepResult
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return store.StepResult{}, fmt.Errorf("decode result %q/%q: %w", run, step, err)
	}
	switch {
	case r.Run == "" || r.Step == "":
		return store.StepResult{}, fmt.Errorf("decode result %q/%q: run or step missing", run, step)
	case r.Run != run || r.Step != step:
		return store.StepResult{}, fmt.Errorf("decode result %q/%q: the body is of %q/%q", run, step, r.Run, r.Step)
	}
	return r, nil
}
