package web

import (
	"context"

	"github.com/flower-run/flower/event"
)

// History is the stream's stored events (package event/eventlog): what a
// client asks for that the broker no longer keeps, or never had (it was
// published by a server that has since restarted).
type History interface {
	// After returns at most limit stored events with seq > after, in order.
	After(ctx context.Context, after, limit int) ([]event.Numbered, error)
}

// maxHistory bounds the stored events of one answer: a client with more to
// read asks again with the last seq it got.
const maxHistory = 5000

// since is the events after after: the broker's window, preceded by the
// stored events older than it when the client is behind the window. gap
// is true only when events the client has not seen are in neither: no
// History, a failed read, or an after beyond the newest event (the client
// counted on a server that died before it stored its last events).
func (s *Server) since(ctx context.Context, after int) ([]event.Numbered, bool) {
	return since(ctx, s.opts.Events, s.opts.History, after)
}

func since(ctx context.Context, b *event.Broker, h History, after int) ([]event.Numbered, bool) {
	ns, gap := b.Since(after)
	if !gap || h == nil || after > b.Last() {
		return ns, gap
	}
	oldest := b.Oldest()
	stored, err := h.After(ctx, after, maxHistory)
	if err != nil {
		return ns, gap
	}
	var out []event.Numbered
	for _, n := range stored {
		if n.Seq >= oldest {
			break
		}
		out = append(out, n)
	}
	if len(stored) == maxHistory && len(out) == len(stored) {
		return out, false // more stored events follow: the client asks again
	}
	return append(out, ns...), false
}
