package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/store"
)

// steered makes fe, the front end of a wake on a database store, also
// steerable from any flower serve --runs attached to that database (issue
// 14): while the run goes on, its human channel follows the workspace's
// journal (web.Follow), and with storeEvents the wake's events are kept in
// the workspace's stored stream (web.Stream), as flower serve keeps its
// own, so GET /runs/ID/events shows them. On SQLite nothing else can reach
// the run: fe is returned as it is.
func steered(g *globals, fe frontEnd, storeEvents bool) frontEnd {
	if u, err := g.storeURL(); err != nil || u == "" {
		return fe
	}
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return fe
	}
	var mu sync.Mutex // guards stream
	var stream *web.Stream
	inner := fe.sink
	fe.sink = func(e event.Event) {
		inner(e)
		mu.Lock()
		s := stream
		mu.Unlock()
		if s != nil {
			s.Publish(e)
		}
	}
	attach := fe.attach
	fe.attach = func(ctx context.Context, run wakeRun) (func(), error) {
		var s *web.Stream
		if storeEvents {
			s = storedStream(ctx, run.store, ws)
			mu.Lock()
			stream = s
			mu.Unlock()
		}
		stopFollow := web.Follow(ctx, run.ch, run.rt.Interrupt, run.store, ws, os.Stderr)
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
				if err := s.End(); err != nil { // before the wake's store closes
					logStreamErr(err)
				}
			}
		}, nil
	}
	return fe
}

// storedStream starts the workspace's stored event stream in the wake's
// store, read once the workspace is leased, so no other driver numbers on
// at the same time. Nil when the store keeps no events or cannot say
// where the stream stands.
func storedStream(ctx context.Context, s store.Store, ws string) *web.Stream {
	log, ok := s.(store.Events)
	if !ok {
		return nil
	}
	st, err := web.NewStream(ctx, log, ws, logStreamErr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flower: events are not stored this time:", err)
		return nil
	}
	st.Attach(s)
	return st
}
