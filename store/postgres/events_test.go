package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flower-run/flower/store"
)

// TestAppendEventsAtOnce: calls made at once share transactions (group
// commit, issue 19), and every call's events are stored, each stream in
// order, whichever call wrote them; a call returns only once its own
// events are stored.
func TestAppendEventsAtOnce(t *testing.T) {
	db := openNew(t)
	defer db.Close()
	ctx := context.Background()
	const streams, calls = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, streams*calls)
	for s := range streams {
		wg.Go(func() {
			stream := fmt.Sprint("run-", s)
			for c := range calls {
				ev := store.Event{Stream: stream, Seq: int64(c + 1), Kind: "text", Time: time.Now(), Body: []byte(`{}`)}
				if err := db.AppendEvents(ctx, ev); err != nil {
					errs <- err
					return
				}
				last, err := db.LastEvent(ctx, stream)
				if err != nil || last != int64(c+1) {
					errs <- fmt.Errorf("%s: last event %d, %v after storing %d", stream, last, err, c+1)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for s := range streams {
		evs, err := db.EventsAfter(ctx, fmt.Sprint("run-", s), 0, 0)
		if err != nil || len(evs) != calls {
			t.Fatalf("run-%d: %d events, %v; want %d", s, len(evs), err, calls)
		}
		for i, e := range evs {
			if e.Seq != int64(i+1) {
				t.Fatalf("run-%d: event %d has seq %d", s, i, e.Seq)
			}
		}
	}
}
