package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/store"
)

func mustCommit(t *testing.T, s store.Store, b store.Batch) {
	t.Helper()
	if err := s.Commit(context.Background(), b); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// fullRun is a run with every field set, to a value that is not its zero
// value; checkAllSet fails when Run gains a field fullRun does not set.
func fullRun(t *testing.T) store.Run {
	r := store.Run{
		ID: "20250314-150926-535897", Workspace: "/w/proj", Status: store.RunInFlight, Outcome: "passed",
		Task: "write a.go — «quoted» \"json\" \\ \x00 🌸", Phrase: "also b.go", Said: "use Go", After: "20250314-150000-000001",
		Step: "work", Row: "work#round2", From: "s-goals", Fork: true, Prompt: "do it\nnow",
		Session: "s-work", Judge: "s-judge", Round: 2, Verdict: "fail", Findings: "the log is empty",
		Done:    []string{"clarify", "goals"},
		Holder:  "host 4242",
		Created: t0.In(time.FixedZone("CEST", 2*3600)), Updated: t0.Add(time.Minute),
		AskTimeout: new(0.5),
	}
	checkAllSet(t, r)
	return r
}

// fullResult is a step result with every field set.
func fullResult(t *testing.T, run, step string) store.StepResult {
	r := store.StepResult{
		Run: run, Step: step, SessionID: "s-" + step, OK: true, CostUSD: 0.0123, NumTurns: 7,
		Text: "done «é»\n", Error: "overloaded", StartedAt: t0, EndedAt: t0.Add(1500 * time.Millisecond),
		Attempts: 2, Errors: []string{"overloaded", "timeout"}, Resumed: true,
		Retired: []string{"s-old"}, Context: 12345, DurationS: 1.5,
	}
	checkAllSet(t, r)
	return r
}

func checkAllSet(t *testing.T, v any) {
	t.Helper()
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		if rv.Field(i).IsZero() {
			t.Fatalf("%T.%s is not set by the suite: give it a value", v, rv.Type().Field(i).Name)
		}
	}
}

// run is a run of workspace ws created n minutes after t0.
func run(id, ws string, n int) store.Run {
	at := t0.Add(time.Duration(n) * time.Minute)
	return store.Run{ID: id, Workspace: ws, Status: store.RunInFlight, Task: "task of " + id, Created: at, Updated: at}
}

func mustRun(t *testing.T, s store.Store, id string) store.Run {
	t.Helper()
	r, ok, err := s.Run(context.Background(), id)
	if err != nil || !ok {
		t.Fatalf("Run(%q): ok=%v err=%v", id, ok, err)
	}
	return r
}

func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got, cmpOpts); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// testRunRoundTrip: every field of a run survives the store, and a
// missing run is not an error.
func testRunRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, ok, err := s.Run(ctx, "none"); ok || err != nil {
		t.Fatalf("Run of a missing id: ok=%v err=%v, want false, nil", ok, err)
	}
	want := fullRun(t)
	mustCommit(t, s, store.Batch{Run: &want})
	diff(t, "Run", want, mustRun(t, s, want.ID))
	want.Done[0] = "changed after Commit" // the store kept its own copy
	if got := mustRun(t, s, want.ID); got.Done[0] != "clarify" {
		t.Errorf("the stored run changed with the caller's slice: Done = %v", got.Done)
	}
}

// testRunReplace: a run is replaced whole by a later one of the same ID,
// and keeps its place in Runs.
func testRunReplace(t *testing.T, s store.Store) {
	first := fullRun(t)
	mustCommit(t, s, store.Batch{Run: &first})
	later := run("later", first.Workspace, 5)
	mustCommit(t, s, store.Batch{Run: &later})
	second := store.Run{ID: first.ID, Workspace: first.Workspace, Status: store.RunFinished, Outcome: "failed",
		Done: []string{"clarify", "goals", "work"}, Created: first.Created, Updated: first.Updated.Add(time.Hour)}
	mustCommit(t, s, store.Batch{Run: &second})
	diff(t, "Run after a replace", second, mustRun(t, s, first.ID)) // Step, Task... are gone
	runs, err := s.Runs(context.Background(), first.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "Runs after a replace", []store.Run{second, later}, runs)
}

// testRuns: Runs lists a workspace's runs oldest first; the workspace is
// matched exactly and "" lists every run.
func testRuns(t *testing.T, s store.Store) {
	all := []store.Run{
		run("r1", "/w/a", 0), run("r2", "/w/b", 1), run("r3", "/w/a", 2),
		run("r4", "/w/ab", 3), run("r5", "/w/a_", 4), run("r6", "/w/a/sub", 5), run("r7", "/w/a", 6),
	}
	for i := range all {
		mustCommit(t, s, store.Batch{Run: &all[i]})
	}
	pick := func(idx ...int) []store.Run {
		var out []store.Run
		for _, i := range idx {
			out = append(out, all[i])
		}
		return out
	}
	tests := []struct {
		workspace string
		want      []store.Run
	}{
		{"/w/a", pick(0, 2, 6)},
		{"/w/b", pick(1)},
		{"/w/a_", pick(4)},
		{"/w/", nil},
		{"/w/none", nil},
		{"", all},
	}
	for _, tt := range tests {
		got, err := s.Runs(context.Background(), tt.workspace)
		if err != nil {
			t.Fatalf("Runs(%q): %v", tt.workspace, err)
		}
		diff(t, "Runs("+tt.workspace+")", tt.want, got)
	}
}

func lineage(t *testing.T, s store.Store, ws string) store.Lineage {
	t.Helper()
	l, err := s.Lineage(context.Background(), ws)
	if err != nil {
		t.Fatalf("Lineage(%q): %v", ws, err)
	}
	return l
}

func bind(ws, step, session string) store.Binding {
	return store.Binding{Workspace: ws, Step: step, Session: session}
}

// testLineage: the newest binding of a step is current and the sessions it
// replaced are retired, oldest first; wakes count; an archive starts an
// empty thread; workspaces do not see each other's bindings.
func testLineage(t *testing.T, s store.Store) {
	const ws, other = "/w/a", "/w/ab"
	empty := store.Lineage{Workspace: ws}
	diff(t, "Lineage of a new workspace", empty, lineage(t, s, ws))

	mustCommit(t, s, store.Batch{Bind: []store.Binding{bind(ws, "clarify", "s1"), bind(ws, "goals", "s2")}})
	mustCommit(t, s, store.Batch{Bind: []store.Binding{bind(other, "clarify", "o1")}})
	mustCommit(t, s, store.Batch{Wake: ws})
	mustCommit(t, s, store.Batch{Wake: ws, Bind: []store.Binding{
		bind(ws, "clarify", "s3"), bind(ws, "clarify", "s3"), // the same session again retires nothing
		bind(ws, "work", "s4"), bind(ws, "clarify", "s5"),
	}})
	want := store.Lineage{Workspace: ws, Woke: 2,
		Steps:   map[string]string{"clarify": "s5", "goals": "s2", "work": "s4"},
		Retired: map[string][]string{"clarify": {"s1", "s3"}}}
	diff(t, "Lineage", want, lineage(t, s, ws))
	diff(t, "Lineage of the other workspace",
		store.Lineage{Workspace: other, Steps: map[string]string{"clarify": "o1"}}, lineage(t, s, other))

	// An archive starts thread 1: no bindings, no wakes, nothing retired.
	mustCommit(t, s, store.Batch{Archive: ws})
	diff(t, "Lineage after an archive", store.Lineage{Workspace: ws, Thread: 1}, lineage(t, s, ws))
	mustCommit(t, s, store.Batch{Wake: ws, Bind: []store.Binding{bind(ws, "clarify", "s6")}})
	diff(t, "Lineage of thread 1",
		store.Lineage{Workspace: ws, Thread: 1, Woke: 1, Steps: map[string]string{"clarify": "s6"}}, lineage(t, s, ws))

	// Archive, Wake and Bind in one batch apply in that order: the
	// binding and the wake belong to the new thread.
	mustCommit(t, s, store.Batch{Archive: ws, Wake: ws, Bind: []store.Binding{bind(ws, "goals", "s7")}})
	diff(t, "Lineage after archive, wake and bind",
		store.Lineage{Workspace: ws, Thread: 2, Woke: 1, Steps: map[string]string{"goals": "s7"}}, lineage(t, s, ws))

	// An archive of a workspace that never had a thread starts thread 1.
	mustCommit(t, s, store.Batch{Archive: "/w/new"})
	diff(t, "Lineage of a first archive", store.Lineage{Workspace: "/w/new", Thread: 1}, lineage(t, s, "/w/new"))
	diff(t, "Lineage of the other workspace after the archives",
		store.Lineage{Workspace: other, Steps: map[string]string{"clarify": "o1"}}, lineage(t, s, other))
}

func results(t *testing.T, s store.Store, run string) []store.StepResult {
	t.Helper()
	got, err := s.Results(context.Background(), run)
	if err != nil {
		t.Fatalf("Results(%q): %v", run, err)
	}
	return got
}

// testResults: every field survives; a result replaces the earlier one of
// its run and step and keeps its place in the first-written order.
func testResults(t *testing.T, s store.Store) {
	if got := results(t, s, ""); len(got) != 0 {
		t.Fatalf("Results of a new store = %d rows, want none", len(got))
	}
	clarify, goals, work := fullResult(t, "r1", "clarify"), fullResult(t, "r1", "goals"), fullResult(t, "r2", "work")
	mustCommit(t, s, store.Batch{Results: []store.StepResult{clarify, goals}})
	mustCommit(t, s, store.Batch{Results: []store.StepResult{work}})
	diff(t, "Results(r1)", []store.StepResult{clarify, goals}, results(t, s, "r1"))

	again := store.StepResult{Run: "r1", Step: "clarify", SessionID: "s-again", Text: "second try", Attempts: 2}
	final := again
	final.OK, final.Text = true, "third try"
	// In one batch, the later of two results of a step wins.
	mustCommit(t, s, store.Batch{Results: []store.StepResult{again, fullResult(t, "r2", "judge"), final}})
	diff(t, "Results(r1) after a replace", []store.StepResult{final, goals}, results(t, s, "r1"))
	diff(t, "Results()", []store.StepResult{final, goals, work, fullResult(t, "r2", "judge")}, results(t, s, ""))
	diff(t, "Results(none)", []store.StepResult(nil), results(t, s, "none"))
	diff(t, "Results(r)", []store.StepResult(nil), results(t, s, "r")) // an exact match, not a prefix
}

// testBatchAllOrNone: a batch whose entries are refused writes none of
// its run, bindings, results or thread changes; a batch that passes writes
// all of them.
func testBatchAllOrNone(t *testing.T, s store.Store) {
	ctx := context.Background()
	const ws = "/w/a"
	stored := entry("p/s", 0)
	mustAppend(t, s, stored)
	r := run("r1", ws, 0)
	batch := store.Batch{
		Archive: ws, Wake: ws,
		Bind:    []store.Binding{bind(ws, "clarify", "s1")},
		Run:     &r,
		Results: []store.StepResult{{Run: "r1", Step: "clarify"}},
		Entries: []store.Entry{entry("p/t", 0), stored}, // stored's uuid is taken
	}
	if err := s.Commit(ctx, batch); !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("Commit with a stored uuid = %v, want ErrDuplicate", err)
	}
	checkNothing(t, s, ws, "r1", "p/t")

	batch.Entries = []store.Entry{entry("p/t", 0), entry("p/t", 1), entry("p/t", 0)}
	if err := s.Commit(ctx, batch); !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("Commit with a uuid twice = %v, want ErrDuplicate", err)
	}
	checkNothing(t, s, ws, "r1", "p/t")

	batch.Entries = chain("p/t", 0, 2)
	mustCommit(t, s, batch)
	diff(t, "Run", r, mustRun(t, s, "r1"))
	diff(t, "Lineage", store.Lineage{Workspace: ws, Thread: 1, Woke: 1, Steps: map[string]string{"clarify": "s1"}}, lineage(t, s, ws))
	diff(t, "Results", batch.Results, results(t, s, "r1"))
	diffEntries(t, "p/t", mustLoad(t, s, "p/t"), chain("p/t", 0, 2))
}

// checkNothing checks that a refused batch left no trace.
func checkNothing(t *testing.T, s store.Store, ws, runID, key string) {
	t.Helper()
	if _, ok, err := s.Run(context.Background(), runID); ok || err != nil {
		t.Errorf("Run(%q) after a refused batch: ok=%v err=%v, want false, nil", runID, ok, err)
	}
	if runs, err := s.Runs(context.Background(), ""); len(runs) != 0 || err != nil {
		t.Errorf("Runs after a refused batch = %d runs, %v; want none", len(runs), err)
	}
	diff(t, "Lineage after a refused batch", store.Lineage{Workspace: ws}, lineage(t, s, ws))
	if got := results(t, s, ""); len(got) != 0 {
		t.Errorf("Results after a refused batch = %d rows, want none", len(got))
	}
	diffEntries(t, key, mustLoad(t, s, key), nil)
}

// testCommitEmpty: an empty batch writes nothing and is no error, even
// with a cancelled context.
func testCommitEmpty(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, b := range []store.Batch{{}, {Bind: []store.Binding{}, Results: []store.StepResult{}, Entries: []store.Entry{}}} {
		if err := s.Commit(ctx, b); err != nil {
			t.Fatalf("Commit of an empty batch = %v, want nil", err)
		}
	}
	checkNothing(t, s, "", "", "k")
}

// testCommitInvalid: a run, binding or result without its identifying
// fields is refused, and so is the rest of its batch.
func testCommitInvalid(t *testing.T, s store.Store) {
	const ws = "/w/a"
	tests := []struct {
		name  string
		spoil func(*store.Batch)
	}{
		{"run without id", func(b *store.Batch) { b.Run.ID = "" }},
		{"run without workspace", func(b *store.Batch) { b.Run.Workspace = "" }},
		{"run without status", func(b *store.Batch) { b.Run.Status = "" }},
		{"binding without workspace", func(b *store.Batch) { b.Bind[1].Workspace = "" }},
		{"binding without step", func(b *store.Batch) { b.Bind[1].Step = "" }},
		{"binding without session", func(b *store.Batch) { b.Bind[1].Session = "" }},
		{"result without run", func(b *store.Batch) { b.Results[1].Run = "" }},
		{"result without step", func(b *store.Batch) { b.Results[1].Step = "" }},
		{"entry without uuid", func(b *store.Batch) { b.Entries[1].UUID = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run("r1", ws, 0)
			b := store.Batch{
				Archive: ws, Wake: ws, Run: &r,
				Bind:    []store.Binding{bind(ws, "clarify", "s1"), bind(ws, "goals", "s2")},
				Results: []store.StepResult{{Run: "r1", Step: "clarify"}, {Run: "r1", Step: "goals"}},
				Entries: chain("k", 0, 2),
			}
			tt.spoil(&b)
			if err := s.Commit(context.Background(), b); err == nil {
				t.Fatal("Commit = nil, want an error")
			}
			checkNothing(t, s, ws, "r1", "k")
		})
	}
}

// testCommitCancelled: a Commit whose context is already done writes
// nothing and says so.
func testCommitCancelled(t *testing.T, s store.Store) {
	const ws = "/w/a"
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := run("r1", ws, 0)
	b := store.Batch{Archive: ws, Wake: ws, Run: &r, Bind: []store.Binding{bind(ws, "clarify", "s1")},
		Results: []store.StepResult{{Run: "r1", Step: "clarify"}}, Entries: chain("k", 0, 2)}
	if err := s.Commit(ctx, b); err == nil {
		t.Fatal("Commit with a cancelled context = nil, want an error")
	}
	checkNothing(t, s, ws, "r1", "k")
}

// testRunReadsCancelled: the run-state reads refuse a context that is
// already done, as every other call does.
func testRunReadsCancelled(t *testing.T, s store.Store) {
	r := run("r1", "/w/a", 0)
	mustCommit(t, s, store.Batch{Run: &r, Bind: []store.Binding{bind("/w/a", "clarify", "s1")},
		Results: []store.StepResult{{Run: "r1", Step: "clarify"}}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := s.Run(ctx, "r1"); err == nil {
		t.Error("Run with a cancelled context = nil error")
	}
	if _, err := s.Runs(ctx, ""); err == nil {
		t.Error("Runs with a cancelled context = nil error")
	}
	if _, err := s.Lineage(ctx, "/w/a"); err == nil {
		t.Error("Lineage with a cancelled context = nil error")
	}
	if _, err := s.Results(ctx, ""); err == nil {
		t.Error("Results with a cancelled context = nil error")
	}
}
