package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// TestReopenRuns: every run-state record survives closing and reopening
// the store: runs, thread numbers and wakes, bindings, results, and the
// entries committed with them.
func TestReopenRuns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	at := time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.FixedZone("CEST", 2*3600))
	r1 := store.Run{ID: "r1", Workspace: "/w", Status: store.RunFinished, Outcome: "passed", Task: "t",
		Done: []string{"clarify", "goals", "work"}, Created: at, Updated: at.Add(time.Minute)}
	r2 := store.Run{ID: "r2", Workspace: "/w", Status: store.RunInFlight, Step: "work", Row: "work#round2",
		From: "s2", Fork: true, Prompt: "p", Session: "s3", Judge: "s4", Round: 2, Holder: "h 1", Created: at.Add(time.Hour)}
	res := []store.StepResult{
		{Run: "r1", Step: "clarify", SessionID: "s1", OK: true, CostUSD: 0.5, NumTurns: 3, StartedAt: at, EndedAt: at.Add(time.Second),
			Attempts: 1, Errors: []string{"e"}, Retired: []string{"s0"}, Context: 99, DurationS: 1},
		{Run: "r2", Step: "work", SessionID: "s3", Error: "cut", Resumed: true},
	}
	batches := []store.Batch{
		{Run: &r1, Bind: []store.Binding{{Workspace: "/w", Step: "clarify", Session: "s0"}}, Entries: notes("k/s0", 0, 2)},
		{Bind: []store.Binding{{Workspace: "/w", Step: "clarify", Session: "s1"}}, Results: res[:1]},
		{Archive: "/w", Wake: "/w"},
		{Wake: "/w", Run: &r2, Bind: []store.Binding{{Workspace: "/w", Step: "work", Session: "s3"}},
			Results: res[1:], Entries: notes("k/s3", 0, 3)},
		{Bind: []store.Binding{{Workspace: "/other", Step: "goals", Session: "o1"}}},
	}
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range batches {
		if err := db.Commit(ctx, b); err != nil {
			t.Fatalf("Commit %d: %v", i, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = open(t, path)
	check := func(what string, want, got any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if d := cmp.Diff(want, got, bodyOpts); d != "" {
			t.Errorf("%s after reopen (-want +got):\n%s", what, d)
		}
	}
	runs, err := db.Runs(ctx, "")
	check("Runs", []store.Run{r1, r2}, runs, err)
	got, _, err := db.Run(ctx, "r2")
	check("Run", r2, got, err)
	l, err := db.Lineage(ctx, "/w")
	check("Lineage", store.Lineage{Workspace: "/w", Thread: 1, Woke: 2, Steps: map[string]string{"work": "s3"}}, l, err)
	l, err = db.Lineage(ctx, "/other")
	check("Lineage of /other", store.Lineage{Workspace: "/other", Steps: map[string]string{"goals": "o1"}}, l, err)
	rs, err := db.Results(ctx, "")
	check("Results", res, rs, err)
	if got := uuids(load(t, db, "k/s3")); !cmp.Equal(got, uuids(notes("k/s3", 0, 3))) {
		t.Errorf("entries after reopen = %v", got)
	}
	// The bindings of the archived thread stay in the file: nothing is
	// deleted, the lineage only stops reading them.
	if got := rawQuery(t, path, `SELECT thread, step, session FROM bindings WHERE workspace = '/w' ORDER BY seq`); !cmp.Equal(got,
		[][]string{{"0", "clarify", "s0"}, {"0", "clarify", "s1"}, {"1", "work", "s3"}}) {
		t.Errorf("bindings rows = %v", got)
	}
}

// TestQueryPlans: the reads of long tables seek an index and sort nothing.
// Last in particular seeks entries(key, kind, seq) instead of walking a
// session backwards until a kind matches (issue 12).
func TestQueryPlans(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	db := open(t, path)
	appendAll(t, db, notes("k", 0, 50)...)
	raw := sqlite.RawDB(db)
	queries := sqlite.Queries()
	tests := []struct {
		stmt  string
		args  []any
		index string
	}{
		{"lastEntry", []any{"k", "note"}, "entries_key_kind_seq (key=? AND kind=?)"},
		{"loadEntries", []any{"k"}, "entries_key_seq (key=?)"},
		{"getRun", []any{"r"}, "sqlite_autoindex_runs_1 (id=?)"},
		{"runsOf", []any{"/w"}, "runs_workspace_seq (workspace=?)"},
		{"lineage", []any{"/w"}, "bindings_workspace_thread_seq (workspace=? AND thread=?)"},
		{"resultsOf", []any{"r"}, "results_run_seq (run=?)"},
	}
	for _, tt := range tests {
		t.Run(tt.stmt, func(t *testing.T) {
			q, ok := queries[tt.stmt]
			if !ok {
				t.Fatalf("no query %s", tt.stmt)
			}
			rows, err := raw.Query("EXPLAIN QUERY PLAN "+q, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			text := strings.Join(plan, "\n")
			if !strings.Contains(text, "INDEX "+tt.index) || strings.Contains(text, "TEMP B-TREE") ||
				strings.Contains(text, "SCAN entries") || strings.Contains(text, "SCAN bindings") {
				t.Errorf("plan of %s:\n%s\nwant a search of %s and no sort", tt.stmt, text, tt.index)
			}
		})
	}
}

// TestCorruptRunRecords: a damaged run or result row is an error naming
// the record, never a panic, and never another record's data.
func TestCorruptRunRecords(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	db := open(t, path)
	r := store.Run{ID: "r1", Workspace: "/w", Status: store.RunInFlight}
	if err := db.Commit(ctx, store.Batch{Run: &r, Results: []store.StepResult{{Run: "r1", Step: "work"}}}); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		"", "{", "null", "[]", `{"id":"r1"}`, `{"id":"r1","workspace":"/w","status":"in_flight"} x`,
		`{"id":"r2","workspace":"/w","status":"in_flight"}`, // the body of another run
		`{"id":"r1","workspace":"/w","status":"in_flight","round":"two"}`,
		"\x01\x02binary",
	} {
		rawExec(t, path, fmt.Sprintf("UPDATE runs SET body = X'%x' WHERE id = 'r1'", body))
		if _, _, err := db.Run(ctx, "r1"); err == nil || !strings.Contains(err.Error(), `decode run "r1"`) {
			t.Errorf("run body %q: Run = %v, want an error naming run r1", body, err)
		}
		if _, err := db.Runs(ctx, ""); err == nil || !strings.Contains(err.Error(), `decode run "r1"`) {
			t.Errorf("run body %q: Runs = %v, want an error naming run r1", body, err)
		}
	}
	for _, body := range []string{
		"", "{", "null", `{"run":"r1"}`, `{"run":"r1","step":"judge"}`, `{"run":"r1","step":"work","ok":1}`,
	} {
		rawExec(t, path, fmt.Sprintf("UPDATE results SET body = X'%x' WHERE run = 'r1'", body))
		if _, err := db.Results(ctx, "r1"); err == nil || !strings.Contains(err.Error(), `decode result "r1"/"work"`) {
			t.Errorf("result body %q: Results = %v, want an error naming r1/work", body, err)
		}
	}
}

// TestTornWALBatches: a crash that tears the WAL loses whole batches. At
// every cut, the run, the wake count, the bindings, the results and the
// entries that survive are those of the same number of batches.
func TestTornWALBatches(t *testing.T) {
	const n = 6
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	db := open(t, path)
	for i := range n {
		step := fmt.Sprint("step", i)
		r := store.Run{ID: "r", Workspace: "/w", Status: store.RunInFlight, Round: i + 1, Task: strings.Repeat("t", 3000)}
		b := store.Batch{Wake: "/w", Run: &r, Bind: []store.Binding{{Workspace: "/w", Step: step, Session: "s"}},
			Results: []store.StepResult{{Run: "r", Step: step, Text: strings.Repeat("x", 3000)}}, Entries: []store.Entry{note("k", i)}}
		if err := db.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	size := fileSize(t, path+"-wal")
	for cut := size; cut >= 0; cut -= 3001 { // drifting across frame edges
		clone := open(t, crashClone(t, path, func(b []byte) []byte { return b[:cut] }))
		m := len(load(t, clone, "k"))
		r, ok, err := clone.Run(ctx, "r")
		if err != nil || ok != (m > 0) || r.Round != m {
			t.Fatalf("cut at %d: %d entries but run round %d (found %v, %v)", cut, m, r.Round, ok, err)
		}
		l, err := clone.Lineage(ctx, "/w")
		if err != nil || l.Woke != m || len(l.Steps) != m {
			t.Fatalf("cut at %d: %d entries but lineage %+v, %v", cut, m, l, err)
		}
		if rs, err := clone.Results(ctx, "r"); err != nil || len(rs) != m {
			t.Fatalf("cut at %d: %d entries but %d results, %v", cut, m, len(rs), err)
		}
		clone.Close()
	}
}
