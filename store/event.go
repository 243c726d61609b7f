package store

import (
	"context"
	"fmt"
	"time"
)

// Event is one event of a stream as the fronts showed it, kept so that a
// UI that restarts (or another flower serve on the same database) resumes
// the stream from any seq (issue 14). Events are derived data: the entries
// and run records are the truth, and an event is never read back by the
// runtime.
type Event struct {
	// Stream names the sequence the event belongs to: a run's id, or a
	// workspace's stream for flower serve (store.SideLog(ws, store.EventLog)).
	Stream string `json:"stream"`
	// Seq numbers the event in its stream, from 1; the publisher assigns
	// it, and numbers may be skipped (kinds that are never stored).
	Seq  int64     `json:"seq"`
	Kind string    `json:"kind"`
	Time time.Time `json:"time"`
	// Body is the event as the API sends it, JSON.
	Body []byte `json:"body"`
}

// Events is the event log of a store. It is not part of Store: a consumer
// that keeps events asserts it (every backend of this module has it).
//
// AppendEvents does not wait for its own fsync: the events become durable
// with the store's next commit (the agent commits every turn) or the
// operating system's writeback. A crash of the process loses none of
// them; a power failure may lose the latest, which the UI then shows as a
// gap. That keeps events off the fsync path of the run (DESIGN.md §3).
type Events interface {
	// AppendEvents writes events in one transaction. An event whose
	// (stream, seq) is stored already is skipped: writing one twice is
	// harmless, and the first body stays.
	AppendEvents(ctx context.Context, evs ...Event) error
	// EventsAfter returns at most limit events of stream with seq > after,
	// in seq order (limit <= 0: all).
	EventsAfter(ctx context.Context, stream string, after int64, limit int) ([]Event, error)
	// LastEvent is the highest seq stored for stream, 0 if none.
	LastEvent(ctx context.Context, stream string) (int64, error)
}

// CheckEvents refuses events a backend must not store: without a stream
// or kind, or with a seq below 1.
func CheckEvents(evs []Event) error {
	for _, e := range evs {
		if e.Stream == "" || e.Kind == "" || e.Seq < 1 {
			return fmt.Errorf("append events: event %d of stream %q, kind %q: want a stream, a kind and a seq >= 1",
				e.Seq, e.Stream, e.Kind)
		}
	}
	return nil
}
