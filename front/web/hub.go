package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// Hub is the part of flower serve that outlives each wake (issue 11): one
// event stream and one server, steering whichever wake is running. After
// a run ends the page keeps its whole history and the verdict, and can
// start the next wake.
type Hub struct {
	stream *Stream
	srv    *Server
	url    string
	next   chan string // the phrase of the next wake, from POST /wake

	now func() time.Time

	mu      sync.Mutex // guards wake, cost, started, history, total and woke
	wake    *Wake      // the wake running; nil between wakes
	history History    // the running wake's stored events; nil between wakes
	cost    float64    // of the wake running, from its usage events
	started time.Time  // when the wake running was attached
	total   int        // steps of the last step event: the banner and the end have no index of their own
	woke    int        // the number of the wake attached last
}

// Wake is what the hub steers of one wake.
type Wake struct {
	Channel   *human.Channel
	Interrupt func(text string) // agent.Runtime.Interrupt
	Oracle    func(ctx context.Context, question string) (string, error)
	Banner    string      // the wake's first line (R3.12)
	Number    int         // this wake's number
	Workspace string      // as shown
	Store     store.Store // the wake's store: the stream is kept there while it runs
}

// NewHub returns the hub of stream, serving on l with token (the other
// options as for New).
func NewHub(l net.Listener, stream *Stream, opts Options) (*Hub, error) {
	h := &Hub{stream: stream, url: URL(l, opts.Token), next: make(chan string, 1), now: opts.Now}
	if h.now == nil {
		h.now = time.Now
	}
	opts.Events, opts.Channel, opts.History = stream.Broker(), hubChannel{h}, hubHistory{h}
	opts.Interrupt, opts.Oracle, opts.Wake = h.interrupt, h.oracle, h.wakeNext
	srv, err := New(opts)
	if err != nil {
		return nil, err
	}
	h.srv = srv
	return h, nil
}

// Server is the hub's server, to Serve.
func (h *Hub) Server() *Server { return h.srv }

// URL is the page's address with the token, to print.
func (h *Hub) URL() string { return h.url }

// Next receives the phrase of the next wake (empty: continue) when the
// page asks for one after the run ended.
func (h *Hub) Next() <-chan string { return h.next }

func (h *Hub) current() *Wake {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.wake
}

// Sink is every wake's sink: it counts the wake's cost and publishes.
func (h *Hub) Sink(e event.Event) {
	if c, ok := e.Payload["cost"].(float64); ok && e.Kind == event.Usage {
		h.mu.Lock()
		h.cost += c
		h.mu.Unlock()
	}
	if n, ok := e.Payload["total"].(int); ok && e.Kind == event.Step {
		h.mu.Lock()
		h.total = n
		h.mu.Unlock()
	}
	h.stream.Publish(e)
}

// Attach steers w until detach, which runs before w's store closes; the
// page shows w's banner.
func (h *Hub) Attach(w Wake) (detach func()) {
	history := h.stream.Attach(w.Store)
	h.mu.Lock()
	h.wake, h.cost, h.history, h.started, h.woke = &w, 0, history, h.now(), w.Number
	total := h.total
	h.mu.Unlock()
	// Seed 004's step payload on every step event, index 0: before the
	// first step. total is the last wake's until this one's first step.
	h.stream.Publish(event.Event{Kind: event.Step, Text: w.Banner,
		Payload: map[string]any{"banner": true, "wake": w.Number, "workspace": w.Workspace,
			"index": 0, "total": total, "resumed": false, "woke": w.Number}})
	return func() {
		h.mu.Lock()
		h.wake, h.history = nil, nil
		h.mu.Unlock()
		h.stream.Detach()
	}
}

// Ended tells the page how the wake ended: ok (its verdict passed), or why
// it stopped, with its cost and duration. The page then shows the end state
// and offers the next wake.
func (h *Hub) Ended(ok bool, why string) {
	h.mu.Lock()
	cost, took, total, woke := h.cost, h.now().Sub(h.started), h.total, h.woke
	h.mu.Unlock()
	text := "✓ the run passed"
	if !ok {
		text = "✗ " + why
	}
	text += " · " + model.USD(cost) + " · " + took.Round(time.Second).String()
	h.stream.Publish(event.Event{Kind: event.Step, Text: text,
		Payload: map[string]any{"ended": true, "ok": ok, "cost": cost, "duration_s": took.Seconds(),
			"index": total, "total": total, "resumed": false, "woke": woke}}) // index: past the last step
}

func (h *Hub) wakeNext(text string) error {
	if h.current() != nil {
		return ErrBusy
	}
	select {
	case h.next <- text:
		return nil
	default:
		return ErrBusy // the next wake is already starting
	}
}

func (h *Hub) interrupt(text string) {
	if w := h.current(); w != nil {
		w.Interrupt(text)
	}
}

func (h *Hub) oracle(ctx context.Context, q string) (string, error) {
	w := h.current()
	if w == nil {
		return "", errors.New("no run is going on: start the next wake first")
	}
	return w.Oracle(ctx, q)
}

// hubChannel is the human channel of the wake running; between wakes
// nothing is asked, and a note or an interrupt is 409 (Ended).
type hubChannel struct{ h *Hub }

func (c hubChannel) ch() *human.Channel {
	if w := c.h.current(); w != nil {
		return w.Channel
	}
	return nil
}

func (c hubChannel) Ended() bool { return c.h.current() == nil }

func (c hubChannel) Pending() []human.Ask {
	if ch := c.ch(); ch != nil {
		return ch.Pending()
	}
	return nil
}

func (c hubChannel) Answer(id, text string) bool {
	ch := c.ch()
	return ch != nil && ch.Answer(id, text)
}

func (c hubChannel) Decline(id, reason string) bool {
	ch := c.ch()
	return ch != nil && ch.Decline(id, reason)
}

func (c hubChannel) Send(text string) {
	if ch := c.ch(); ch != nil {
		ch.Send(text)
	}
}

// Known reports ids of the wake running: an ask of an ended wake is gone.
func (c hubChannel) Known(id string) bool {
	ch := c.ch()
	return ch != nil && ch.Known(id)
}

// hubHistory serves the running wake's stored events; between wakes the
// store is closed and the broker's window is all there is.
type hubHistory struct{ h *Hub }

func (x hubHistory) After(ctx context.Context, after, limit int) ([]event.Numbered, error) {
	x.h.mu.Lock()
	hist := x.h.history
	x.h.mu.Unlock()
	if hist == nil {
		return nil, nil
	}
	return hist.After(ctx, after, limit)
}

// ServeHub is flower serve's hub of workspace ws for the whole process:
// the stream kept across wakes in the store open returns (OpenStream),
// the hub serving on l with opts. stop ends serving, stores what the last
// wake left unstored (Finish) and closes the stream; the errors of
// serving and storing then go to log.
func ServeHub(ctx context.Context, l net.Listener, open Opener, ws string, opts Options, log io.Writer) (_ *Hub, stop func(), err error) {
	logErr := func(err error) { fmt.Fprintln(log, "flower:", err) }
	stream, err := OpenStream(ctx, open, ws, logErr)
	if err != nil {
		return nil, nil, err
	}
	h, err := NewHub(l, stream, opts)
	if err != nil {
		return nil, nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- h.Server().Serve(sctx, l) }()
	return h, func() {
		cancel()
		if err := <-served; err != nil {
			logErr(err)
		}
		if err := stream.Finish(context.Background(), open); err != nil {
			logErr(err)
		}
		stream.Broker().Close()
	}, nil
}

// Front is the hub as the front end of a wake (flower.Host.Wake): every
// event on its stream, the wake steered from the page while it runs.
// attached, when set, runs each time the page starts showing a wake.
func (h *Hub) Front(attached func()) flower.Front {
	return flower.Front{Sink: h.Sink, Attach: func(_ context.Context, run flower.WakeRun) (func(), error) {
		detach := h.Attach(Wake{Channel: run.Channel, Interrupt: run.Runtime.Interrupt, Oracle: run.Oracle.Ask,
			Banner: run.Banner, Number: run.Number, Workspace: run.Workspace, Store: run.Store})
		if attached != nil {
			attached()
		}
		return detach, nil
	}}
}
