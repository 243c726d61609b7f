// Package storetest is the conformance suite of store.Store: every backend
// runs it from its own tests, as file systems run testing/fstest.TestFS.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openEmpty(t) })
//	}
//
// What a suite cannot see from outside (persistence across a reopen, file
// modes, crash recovery) belongs to the backend's own tests.
package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flower-run/flower/store"
)

// Run runs the conformance suite: round trips of every entry kind and block
// type, append order, exact-key loads, duplicate and invalid batches refused
// whole, meta upserts, Sessions by prefix and creation time, summaries, and
// the run state: runs replaced by ID, lineage from bindings across wakes and
// archives, step results replaced by run and step, and batches committed
// all or none.
// open must return a new, empty store for each call; Run closes every store
// it opens and fails the test if Close fails.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"Order", testOrder},
		{"KeyIsolation", testKeyIsolation},
		{"LoadMissing", testLoadMissing},
		{"AppendNothing", testAppendNothing},
		{"Duplicate", testDuplicate},
		{"Invalid", testInvalid},
		{"Cancelled", testCancelled},
		{"Meta", testMeta},
		{"Sessions", testSessions},
		{"Summary", testSummary},
		{"Last", testLast},
		{"Heads", testHeads},
		{"HeadsRefused", testHeadsRefused},
		{"Stats", testStats},
		{"RunRoundTrip", testRunRoundTrip},
		{"RunReplace", testRunReplace},
		{"Runs", testRuns},
		{"Lineage", testLineage},
		{"Results", testResults},
		{"BatchAllOrNone", testBatchAllOrNone},
		{"CommitEmpty", testCommitEmpty},
		{"CommitInvalid", testCommitInvalid},
		{"CommitCancelled", testCommitCancelled},
		{"CommitMeta", testCommitMeta},
		{"RunReadsCancelled", testRunReadsCancelled},
		{"Events", testEvents},
		{"EventsDuplicate", testEventsDuplicate},
		{"EventsInvalid", testEventsInvalid},
		{"Move", testMove},
		{"MoveShared", testMoveShared},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tt.fn(t, s)
		})
	}
}

// cmpOpts compare entries as a backend may fairly return them: times by
// instant, not by location; tool input by JSON value, not by bytes (a
// backend may store JSON as a document, jsonb-like); empty slices as nil.
// Seq is checked on its own, by checkSeq.
var cmpOpts = cmp.Options{
	cmpopts.IgnoreFields(store.Entry{}, "Seq"),
	cmp.FilterPath(notJSON, cmpopts.EquateEmpty()),
	cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
	cmp.Comparer(jsonEqual),
}

func notJSON(p cmp.Path) bool { return p.Last().Type() != reflect.TypeFor[json.RawMessage]() }

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(x, y)
}

// t0 is the time of the first entry a test writes; times are given, never
// read from the clock, so runs are reproducible.
var t0 = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

// entry makes a note entry of key, the n-th of its chain.
func entry(key string, n int) store.Entry {
	e := store.Entry{
		UUID: fmt.Sprintf("%s#%d", key, n),
		Key:  key,
		Kind: store.KindNote,
		Time: t0.Add(time.Duration(n) * time.Second),
		Text: fmt.Sprintf("note %d", n),
	}
	if n > 0 {
		e.Parent = fmt.Sprintf("%s#%d", key, n-1)
	}
	return e
}

// chain makes n chained entries of key, numbered from first.
func chain(key string, first, n int) []store.Entry {
	out := make([]store.Entry, n)
	for i := range out {
		out[i] = entry(key, first+i)
	}
	return out
}

func mustAppend(t *testing.T, s store.Store, entries ...store.Entry) {
	t.Helper()
	if err := s.Append(context.Background(), entries...); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

func mustLoad(t *testing.T, s store.Store, key string) []store.Entry {
	t.Helper()
	got, err := s.Load(context.Background(), key)
	if err != nil {
		t.Fatalf("Load(%q): %v", key, err)
	}
	checkSeq(t, got)
	return got
}

// checkSeq checks that the store assigned positive, strictly increasing
// sequence numbers.
func checkSeq(t *testing.T, entries []store.Entry) {
	t.Helper()
	var last int64
	for i, e := range entries {
		if e.Seq <= last {
			t.Fatalf("entry %d (%s): seq %d after %d, want increasing and positive", i, e.UUID, e.Seq, last)
		}
		last = e.Seq
	}
}

func diffEntries(t *testing.T, key string, got, want []store.Entry) {
	t.Helper()
	if d := cmp.Diff(want, got, cmpOpts); d != "" {
		t.Errorf("Load(%q) mismatch (-want +got):\n%s", key, d)
	}
}
