package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/flower-run/flower/store"
)

// eventsOf asserts that s keeps events: every backend of this module does.
func eventsOf(t *testing.T, s store.Store) store.Events {
	t.Helper()
	ev, ok := s.(store.Events)
	if !ok {
		t.Skipf("%T keeps no event log (store.Events is optional: consumers type-assert it)", s)
	}
	return ev
}

func event(stream string, seq int64) store.Event {
	return store.Event{Stream: stream, Seq: seq, Kind: "text",
		Time: time.Date(2026, 12, 1, 20, 0, int(seq), 5, time.UTC),
		Body: []byte(fmt.Sprintf(`{"kind":"text","text":"event %d of %s","payload":{"n":%d}}`, seq, stream, seq))}
}

// testEvents: events come back by stream, in seq order, after a seq, up to
// a limit, with holes in the numbering kept; LastEvent is the highest seq.
func testEvents(t *testing.T, s store.Store) {
	ctx := context.Background()
	ev := eventsOf(t, s)
	if n, err := ev.LastEvent(ctx, "run-a"); err != nil || n != 0 {
		t.Fatalf("LastEvent of an empty stream = %d, %v; want 0", n, err)
	}
	// Two calls, out of order within the second, a hole at 4, and another
	// stream interleaved.
	if err := ev.AppendEvents(ctx, event("run-a", 1), event("run-a", 2), event("run-b", 1)); err != nil {
		t.Fatal(err)
	}
	if err := ev.AppendEvents(ctx, event("run-a", 5), event("run-a", 3), event("run-b", 2)); err != nil {
		t.Fatal(err)
	}
	got, err := ev.EventsAfter(ctx, "run-a", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, got, event("run-a", 1), event("run-a", 2), event("run-a", 3), event("run-a", 5))
	got, err = ev.EventsAfter(ctx, "run-a", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, got, event("run-a", 3))
	got, err = ev.EventsAfter(ctx, "run-a", 5, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, got)
	got, err = ev.EventsAfter(ctx, "run", 0, 0) // a prefix is another stream
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, got)
	if n, err := ev.LastEvent(ctx, "run-a"); err != nil || n != 5 {
		t.Errorf("LastEvent(run-a) = %d, %v; want 5", n, err)
	}
	if n, err := ev.LastEvent(ctx, "run-b"); err != nil || n != 2 {
		t.Errorf("LastEvent(run-b) = %d, %v; want 2", n, err)
	}
}

// testEventsDuplicate: an event written again (a publisher retrying after
// a failed write) is skipped, and the first body stays.
func testEventsDuplicate(t *testing.T, s store.Store) {
	ctx := context.Background()
	ev := eventsOf(t, s)
	first := event("run-a", 1)
	if err := ev.AppendEvents(ctx, first); err != nil {
		t.Fatal(err)
	}
	again := first
	again.Body = []byte(`{"kind":"text","text":"other"}`)
	if err := ev.AppendEvents(ctx, again, event("run-a", 2)); err != nil {
		t.Fatalf("AppendEvents with a stored seq: %v; want it skipped", err)
	}
	got, err := ev.EventsAfter(ctx, "run-a", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, got, first, event("run-a", 2))
}

// testEventsInvalid: an event without a stream or kind, or with a seq
// below 1, is refused, and nothing of its call is stored.
func testEventsInvalid(t *testing.T, s store.Store) {
	ctx := context.Background()
	ev := eventsOf(t, s)
	for _, bad := range []store.Event{{Seq: 1, Kind: "text"}, {Stream: "run-a", Seq: 2}, {Stream: "run-a", Kind: "text"}} {
		if err := ev.AppendEvents(ctx, event("run-a", 1), bad); err == nil {
			t.Errorf("AppendEvents(%+v) = nil; want an error", bad)
		}
	}
	if n, err := ev.LastEvent(ctx, "run-a"); err != nil || n != 0 {
		t.Errorf("LastEvent after refused calls = %d, %v; want 0", n, err)
	}
}

func checkEvents(t *testing.T, got []store.Event, want ...store.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events %v; want %d", len(got), seqs(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Stream != w.Stream || g.Seq != w.Seq || g.Kind != w.Kind || !g.Time.Equal(w.Time) || string(g.Body) != string(w.Body) {
			t.Errorf("event %d = %+v (body %s); want %+v (body %s)", i, g, g.Body, w, w.Body)
		}
	}
}

func seqs(evs []store.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}
