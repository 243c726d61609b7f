package web

import (
	"context"
	"fmt"
	"io"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/event/eventlog"
	"github.com/flower-run/flower/store"
)

// Stream is a workspace's event stream kept in the store (issue 14): the
// broker numbers on from the stored stream, a writer stores each event
// (deltas excepted) off the run's goroutine while a store is attached, and
// History reads what the broker no longer keeps. flower serve keeps one
// across its wakes; every other driver on a database store keeps one per
// wake, so GET /runs/ID/events shows its run.
type Stream struct {
	broker *event.Broker
	writer *eventlog.Writer
	key    string
}

// NewStream starts the stream of workspace ws after the events stored in
// log (nil: none yet). When the last writer died before storing its last
// events, the stream numbers on past them and says so in an error event.
// onError receives the errors of storing, which cost only a gap later.
func NewStream(ctx context.Context, log store.Events, ws string, onError func(error)) (*Stream, error) {
	key := store.SideLog(ws, store.EventLog)
	var start, lost int
	if log != nil {
		var err error
		if start, lost, err = eventlog.Resume(ctx, log, key); err != nil {
			return nil, err
		}
	}
	b := event.NewBrokerAt(0, start)
	w := eventlog.NewWriter(b, key, start)
	w.OnError = onError
	s := &Stream{broker: b, writer: w, key: key}
	if lost > 0 {
		s.Publish(event.Event{Kind: event.Error, Text: fmt.Sprintf(
			"the last process steering this workspace stopped before storing all its events: those after #%d are lost, and the count goes on from #%d", lost, start+1),
			Payload: map[string]any{"source": "eventlog", "lost_after": lost}})
	}
	return s, nil
}

// Broker is the stream's broker, for Options.Events.
func (s *Stream) Broker() *event.Broker { return s.broker }

// Publish is a run's sink.
func (s *Stream) Publish(e event.Event) {
	s.broker.Publish(e)
	s.writer.Kick()
}

// Attach stores the stream in st until Detach or End, and returns what
// the server reads stored events through (nil when st keeps none).
func (s *Stream) Attach(st store.Store) History {
	log, ok := st.(store.Events)
	if !ok {
		return nil
	}
	s.writer.Attach(log)
	return eventlog.Reader{Log: log, Stream: s.key}
}

// Detach stops storing, before the attached store closes; what is not
// stored yet waits for the next Attach.
func (s *Stream) Detach() { s.writer.Detach() }

// End stores what is left and marks the stream ended cleanly, before the
// attached store closes: nothing more is published.
func (s *Stream) End() error { return s.writer.End() }

// Opener opens the store a stream is kept in, reading only; nil when
// there is none yet.
type Opener func(ctx context.Context) (store.Store, error)

// OpenStream starts the stream of workspace ws that a process keeps
// across its wakes (flower serve, whose wakes each open and close their
// own store) after the events stored in the store open returns, which it
// closes again.
func OpenStream(ctx context.Context, open Opener, ws string, onError func(error)) (*Stream, error) {
	st, err := open(ctx)
	if err != nil {
		return nil, err
	}
	var log store.Events
	if st != nil {
		defer st.Close()
		log, _ = st.(store.Events)
	}
	return NewStream(ctx, log, ws, onError)
}

// Finish stores what the last wake left unstored (its verdict line) and
// marks the stream ended, in the store open returns, so the next process
// numbers on without a gap; an error costs it only a gap notice.
func (s *Stream) Finish(ctx context.Context, open Opener) error {
	st, err := open(ctx)
	if err != nil || st == nil {
		return err
	}
	defer st.Close()
	s.Attach(st)
	return s.End()
}

// StoredStream starts the stream of workspace ws for one driver of its
// run (a wake, a worker's run), kept in st after what st holds: read once
// the workspace is leased, so no other driver numbers on at the same
// time. Nil when st keeps no events or cannot say where the stream
// stands, which is said on log, as the errors of storing are.
func StoredStream(ctx context.Context, st store.Store, ws string, log io.Writer) *Stream {
	events, ok := st.(store.Events)
	if !ok {
		return nil
	}
	s, err := NewStream(ctx, events, ws, func(err error) { fmt.Fprintln(log, "flower:", err) })
	if err != nil {
		fmt.Fprintln(log, "flower: events are not stored this time:", err)
		return nil
	}
	s.Attach(st)
	return s
}
