package main

import (
	"context"
	"fmt"
	"os"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/store"
)

// newServeEvents starts flower serve's event stream of workspace ws
// (front/web.Stream) after the events stored in the store of g, read
// without creating or upgrading anything.
func newServeEvents(ctx context.Context, g *globals, ws string) (*web.Stream, error) {
	s, err := openEvents(ctx, g)
	if err != nil {
		return nil, err
	}
	var log store.Events
	if s != nil {
		defer s.Close()
		log, _ = s.(store.Events)
	}
	st, err := web.NewStream(ctx, log, ws, logStreamErr)
	if err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	return st, nil
}

func logStreamErr(err error) { fmt.Fprintln(os.Stderr, "flower:", err) }

// finishStream stores what the last wake left unstored (the verdict line)
// and marks the stream ended, in the store reopened for that, since each
// wake closed its own; an error only costs the next serve a gap notice.
func finishStream(g *globals, st *web.Stream) {
	s, err := openEvents(context.Background(), g)
	if err != nil || s == nil {
		return
	}
	defer s.Close()
	st.Attach(s)
	if err := st.End(); err != nil {
		logStreamErr(err)
	}
}

// openEvents opens the store that keeps the event log, reading only:
// nil when there is no store yet, or one older than the event log.
func openEvents(ctx context.Context, g *globals) (store.Store, error) {
	u, err := g.storeURL()
	if err != nil {
		return nil, err
	}
	s, err := flower.ReadStore(ctx, g.runDir, u)
	return s, fail(err)
}
