package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/flower-run/flower/store"
)

// BenchmarkAppendEvents is what storing a turn's events costs: five events
// (text, tool call, tool result, usage, step) in one transaction, without
// an fsync of its own. Compare with BenchmarkAppend, one fsync'd entry.
func BenchmarkAppendEvents(b *testing.B) {
	db := benchStore(b)
	ctx := context.Background()
	var seq int64
	at := time.Now()
	for b.Loop() {
		evs := make([]store.Event, 5)
		for i := range evs {
			seq++
			evs[i] = store.Event{Stream: store.SideLog("/home/me/proj", store.EventLog), Seq: seq, Kind: "text", Time: at,
				Body: []byte(fmt.Sprintf(`{"kind":"text","text":"event %d of a turn, about a line of model text"}`, seq))}
		}
		if err := db.AppendEvents(ctx, evs...); err != nil {
			b.Fatal(err)
		}
	}
}
