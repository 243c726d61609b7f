package sqlite_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/store"
)

// TestAttemptRoundTrip: an op_attempt entry (issue 9, R5.7) comes back as
// written, its Op whole: resume counts re-executions by it. The body
// format encodes Kind as a string, so the new kind needs no new version.
func TestAttemptRoundTrip(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "sessions.db"))
	key := "-w-proj/attempt"
	at := time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC)
	in := json.RawMessage(`{"command":"make"}`)
	want := []store.Entry{
		{UUID: "a1", Key: key, Kind: store.KindOpStarted, Time: at, Op: &store.Op{ID: "tu1", Tool: "Bash", Input: in, Class: "effect"}},
		{UUID: "a2", Parent: "a1", Key: key, Kind: store.KindAttempt, Time: at, Op: &store.Op{ID: "tu1", Tool: "Bash", Input: in, Class: "effect"}},
	}
	ctx := context.Background()
	if err := db.Append(ctx, want...); err != nil {
		t.Fatal(err)
	}
	got, err := db.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		want[i].Seq = got[i].Seq
	}
	if d := cmp.Diff(want, got, bodyOpts); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	last, ok, err := db.Last(ctx, key, store.KindAttempt)
	if err != nil || !ok || last.UUID != "a2" {
		t.Fatalf("Last(op_attempt) = %v %v %v", last.UUID, ok, err)
	}
}
