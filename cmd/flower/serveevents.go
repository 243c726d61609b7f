package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/event/eventlog"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// serveEvents is flower serve's event stream, kept in the store (issue
// 14): the broker numbers on from the stored stream, a writer stores each
// event (deltas excepted) off the run's goroutine, and the Web server reads
// what the broker no longer keeps from the store.
type serveEvents struct {
	broker *event.Broker
	writer *eventlog.Writer
	stream string
}

// newServeEvents starts the stream of workspace ws after its stored events.
func newServeEvents(ctx context.Context, g *globals, ws string) (*serveEvents, error) {
	stream := store.SideLog(ws, store.EventLog)
	start, lost, err := storedStart(ctx, g, stream)
	if err != nil {
		return nil, err
	}
	b := event.NewBrokerAt(0, start)
	w := eventlog.NewWriter(b, stream, start)
	w.OnError = func(err error) { fmt.Fprintln(os.Stderr, "flower:", err) }
	if lost > 0 {
		b.Publish(event.Event{Kind: event.Error, Text: fmt.Sprintf(
			"the last flower serve here stopped before storing all its events: those after #%d are lost, and the count goes on from #%d", lost, start+1),
			Payload: map[string]any{"source": "eventlog", "lost_after": lost}})
	}
	return &serveEvents{broker: b, writer: w, stream: stream}, nil
}

// publish is the run's sink.
func (e *serveEvents) publish(ev event.Event) {
	e.broker.Publish(ev)
	e.writer.Kick()
}

// attach stores the stream in s while a wake runs, and returns what the
// Web server reads stored events through (nil when s keeps none).
func (e *serveEvents) attach(s store.Store) web.History {
	log, ok := s.(store.Events)
	if !ok {
		return nil
	}
	e.writer.Attach(log)
	return eventlog.Reader{Log: log, Stream: e.stream}
}

// end stores what is left and marks the stream ended cleanly, before the
// wake's store closes: flower serve publishes nothing more.
func (e *serveEvents) end() {
	if err := e.writer.End(); err != nil {
		fmt.Fprintln(os.Stderr, "flower:", err)
	}
}

// finish stores what the last wake left unstored (the verdict line) and
// marks the stream ended, in the store reopened for that, since each
// wake closed its own; an error only costs the next serve a gap notice.
func (e *serveEvents) finish(g *globals) {
	s, err := openEvents(context.Background(), g)
	if err != nil || s == nil {
		return
	}
	defer s.Close()
	e.attach(s)
	e.end()
}

// openEvents opens the store that keeps the event log, reading only:
// nil when there is no store yet, or one older than the event log.
func openEvents(ctx context.Context, g *globals) (store.Store, error) {
	u, err := g.storeURL()
	if err != nil {
		return nil, err
	}
	if u != "" {
		return readRemote(ctx, u)
	}
	path := filepath.Join(g.runDir, flower.StoreFile)
	v, err := sqlite.Version(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && v < store.SchemaVersion) {
		return nil, nil
	}
	if err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	db, err := sqlite.Open(path)
	if err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	return db, nil
}

// storedStart is where stream goes on (eventlog.Resume), read without
// creating or upgrading anything: 0 when there is no store yet, or one
// older than the event log.
func storedStart(ctx context.Context, g *globals, stream string) (start, lost int, err error) {
	s, err := openEvents(ctx, g)
	if err != nil || s == nil {
		return 0, 0, err
	}
	defer s.Close()
	log, ok := s.(store.Events)
	if !ok {
		return 0, 0, nil
	}
	start, lost, err = eventlog.Resume(ctx, log, stream)
	if err != nil {
		return 0, 0, &exitError{code: exitFailed, err: err}
	}
	return start, lost, nil
}
