package web

import (
	"context"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/flower-run/flower/event"
)

// The WebSocket's subprotocols: the client offers both, the server picks
// the first; the second carries the token (see the package doc).
const (
	subprotocol       = "flower.v1"
	subprotocolPrefix = "bearer."
)

// Per-connection bounds: the events a connection may fall behind by before
// the broker drops some for it (they are then re-read from the kept
// events), and how long one write may take before the client is given up.
const (
	wsBuffer       = 512
	wsWriteTimeout = 10 * time.Second
	maxBatch       = 200 // events in one message
)

// websocket streams the events: first those after ?after=N (the client's
// last seq, for a resume after a reconnect), then each new one, as
// messages shaped like GET /events. It ends when the client goes away or
// the server stops.
func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	after, err := afterParam(r)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	s.conns.Add(1)
	defer s.conns.Done()
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{subprotocol}})
	if err != nil {
		return // Accept has answered the request
	}
	defer c.CloseNow()
	ctx := c.CloseRead(r.Context()) // done when the client closes or the server stops
	// Subscribe before reading the backlog, so nothing published in
	// between is missed; what arrives twice is skipped by seq.
	sub := s.opts.Events.Subscribe(ctx, "websocket "+r.RemoteAddr, wsBuffer)
	defer sub.Cancel()
	p := pump{c: c, events: s.opts.Events, since: s.since, last: after}
	if err := p.catchUp(ctx); err != nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			p.farewell(r.Context())
			return
		case n, ok := <-sub.C:
			if !ok {
				return
			}
			if err := p.next(ctx, n, sub.C); err != nil {
				return
			}
			// Events dropped at the tail announce themselves by no later
			// event: with nothing buffered, anything newer than what was
			// sent is read from the kept events.
			if len(sub.C) == 0 && s.opts.Events.Last() > p.last {
				if err := p.catchUp(ctx); err != nil {
					return
				}
			}
		}
	}
}

// pump sends events to one WebSocket in seq order, each once.
type pump struct {
	c      *websocket.Conn
	events *event.Broker
	since  func(ctx context.Context, after int) ([]event.Numbered, bool) // Server.since
	last   int                                                           // the seq of the last event sent (or the client had)
}

// catchUp sends every kept event after last (stored ones first: see
// Server.since), in messages of at most maxBatch events, the first with
// the gap flag. It sends at least one message, so a new client learns at
// once that it is connected.
func (p *pump) catchUp(ctx context.Context) error {
	for first := true; ; first = false {
		ns, gap := p.since(ctx, p.last)
		if !first && len(ns) == 0 {
			return nil
		}
		for sent := false; !sent || len(ns) > 0; sent = true {
			part := ns[:min(len(ns), maxBatch)]
			if err := p.send(ctx, part, gap && first && !sent); err != nil {
				return err
			}
			if len(part) > 0 {
				p.last = part[len(part)-1].Seq
			}
			ns = ns[len(part):]
		}
		// A long stored backlog comes a page at a time (maxHistory).
		if p.last >= p.events.Last() {
			return nil
		}
	}
}

// next sends n with whatever else is already buffered, as one message. An
// event whose seq skips ahead means the broker dropped some for this slow
// connection: they are re-read from the kept events instead.
func (p *pump) next(ctx context.Context, n event.Numbered, more <-chan event.Numbered) error {
	if n.Seq <= p.last {
		return nil // already sent with the backlog
	}
	if n.Seq != p.last+1 {
		return p.catchUp(ctx)
	}
	ns := []event.Numbered{n}
	for len(ns) < maxBatch {
		m, ok := poll(more)
		if !ok {
			break
		}
		if m.Seq != ns[len(ns)-1].Seq+1 {
			if err := p.sendAll(ctx, ns); err != nil {
				return err
			}
			return p.catchUp(ctx)
		}
		ns = append(ns, m)
	}
	return p.sendAll(ctx, ns)
}

// poll takes an event from c if one is waiting.
func poll(c <-chan event.Numbered) (event.Numbered, bool) {
	select {
	case n, ok := <-c:
		return n, ok
	default:
		return event.Numbered{}, false
	}
}

// farewell sends the events the client has not seen yet, so a page
// watching a run that ends shows its last events, and closes the
// connection. It does nothing when the client went away (server still up).
func (p *pump) farewell(server context.Context) {
	if server.Err() == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), wsWriteTimeout)
	defer cancel()
	if p.events.Last() > p.last {
		p.catchUp(ctx)
	}
	p.c.Close(websocket.StatusGoingAway, "the server stopped")
}

func (p *pump) sendAll(ctx context.Context, ns []event.Numbered) error {
	if err := p.send(ctx, ns, false); err != nil {
		return err
	}
	p.last = ns[len(ns)-1].Seq
	return nil
}

func (p *pump) send(ctx context.Context, ns []event.Numbered, gap bool) error {
	ctx, cancel := context.WithTimeout(ctx, wsWriteTimeout)
	defer cancel()
	return p.c.Write(ctx, websocket.MessageText, newBatch(ns, gap).encode())
}
