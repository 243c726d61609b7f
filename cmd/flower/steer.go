package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/event/eventlog"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
)

// inboundChannel is the PostgreSQL notification channel on which flower
// serve --runs says that it put a record in a workspace's human journal;
// the payload is the journal's key.
const inboundChannel = postgres.InboundChannel

// listener is a store that can wake a process on a notification
// (store/postgres).
type listener interface {
	Listen(ctx context.Context, channel string, fn func(payload string))
}

// steered makes fe, the front end of a wake on a database store, also
// steerable from any flower serve --runs attached to that database (issue
// 14): while the run goes on, the human channel follows its journal for
// answers, mail and interrupts put there by other processes (human.Follower,
// woken by a notification, else every poll), and with storeEvents the
// wake's events are kept in the workspace's stored stream, as flower serve
// keeps its own, so GET /runs/ID/events shows them. On SQLite nothing
// else can reach the run: fe is returned as it is.
func steered(g *globals, fe frontEnd, storeEvents bool) frontEnd {
	if u, err := g.storeURL(); err != nil || u == "" {
		return fe
	}
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return fe
	}
	var mu sync.Mutex // guards stream
	var stream *serveEvents
	inner := fe.sink
	fe.sink = func(e event.Event) {
		inner(e)
		mu.Lock()
		s := stream
		mu.Unlock()
		if s != nil {
			s.publish(e)
		}
	}
	attach := fe.attach
	fe.attach = func(ctx context.Context, run wakeRun) (func(), error) {
		var s *serveEvents
		if storeEvents {
			s = storedStream(ctx, run.store, ws)
			mu.Lock()
			stream = s
			mu.Unlock()
		}
		stopFollow := follow(ctx, run, ws)
		detach, err := attach(ctx, run)
		if err != nil {
			stopFollow()
			return nil, err
		}
		return func() {
			detach()
			stopFollow()
			if s != nil {
				mu.Lock()
				stream = nil
				mu.Unlock()
				s.end() // before the wake's store closes
			}
		}, nil
	}
	return fe
}

// storedStream starts the workspace's stored event stream in the wake's
// store, after the events stored there: read once the workspace is
// leased, so no other driver numbers on at the same time. Nil when the
// store keeps no events or cannot say where the stream stands.
func storedStream(ctx context.Context, s store.Store, ws string) *serveEvents {
	log, ok := s.(store.Events)
	if !ok {
		return nil
	}
	key := store.SideLog(ws, store.EventLog)
	start, lost, err := eventlog.Resume(ctx, log, key)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flower: events are not stored this time:", err)
		return nil
	}
	b := event.NewBrokerAt(0, start)
	w := eventlog.NewWriter(b, key, start)
	w.OnError = func(err error) { fmt.Fprintln(os.Stderr, "flower:", err) }
	e := &serveEvents{broker: b, writer: w, stream: key}
	w.Attach(log)
	if lost > 0 {
		e.publish(event.Event{Kind: event.Error, Text: fmt.Sprintf(
			"the last driver here stopped before storing all its events: those after #%d are lost, and the count goes on from #%d", lost, start+1),
			Payload: map[string]any{"source": "eventlog", "lost_after": lost}})
	}
	return e
}

// follow runs the human channel's follower of the workspace's journal
// until the returned stop is called; stop waits for it.
func follow(ctx context.Context, run wakeRun, ws string) (stop func()) {
	nudge := make(chan struct{}, 1)
	f, err := run.ch.Follow(human.FollowOptions{Interrupt: run.rt.Interrupt, Nudge: nudge})
	if err != nil {
		return func() {}
	}
	// The first pass before the run starts: what is in the journal by then
	// arrived while no process followed (an interrupt of it is stale).
	if err := f.Pass(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "flower: follow the human journal:", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if l, ok := run.store.(listener); ok {
		key := store.SideLog(ws, store.HumanJournal)
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Listen(ctx, inboundChannel, func(p string) {
				if p == key || p == "" {
					select {
					case nudge <- struct{}{}:
					default:
					}
				}
			})
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		f.Run(ctx)
	}()
	return func() { cancel(); wg.Wait() }
}
