package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/model"
)

// hub is the part of flower serve that outlives each wake (issue 11): one
// event broker and one Web server, steering whichever wake is running.
// After a run ends the page keeps its whole history and the verdict, and
// can start the next wake.
type hub struct {
	events *event.Broker
	srv    *web.Server
	url    string
	shown  sync.Once // the address is printed once, after the first banner

	mu   sync.Mutex // guards run and cost
	run  *wakeRun   // the wake running; nil between wakes
	cost float64    // of the wake running, from its usage events
	next chan string
}

func newHub(l net.Listener, token string) (*hub, error) {
	h := &hub{events: event.NewBroker(0), url: web.URL(l, token), next: make(chan string, 1)}
	srv, err := web.New(web.Options{Token: token, Events: h.events, Channel: hubChannel{h},
		Interrupt: h.interrupt, Oracle: h.oracle, Wake: h.wake})
	if err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	h.srv = srv
	return h, nil
}

// current is the wake running, or nil.
func (h *hub) current() *wakeRun {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.run
}

// frontEnd is the Web front end of one wake.
func (h *hub) frontEnd(out io.Writer) frontEnd {
	sink := func(e event.Event) {
		if c, ok := e.Payload["cost"].(float64); ok && e.Kind == event.Usage {
			h.mu.Lock()
			h.cost += c
			h.mu.Unlock()
		}
		h.events.Publish(e)
	}
	return frontEnd{sink: sink, attach: func(ctx context.Context, run wakeRun) (func(), error) {
		h.mu.Lock()
		h.run, h.cost = &run, 0
		h.mu.Unlock()
		h.events.Publish(event.Event{Kind: event.Step, Text: run.banner,
			Payload: map[string]any{"banner": true, "wake": run.wake, "workspace": run.ws}})
		h.showURL(out)
		return func() {
			h.mu.Lock()
			h.run = nil
			h.mu.Unlock()
		}, nil
	}}
}

func (h *hub) showURL(out io.Writer) {
	h.shown.Do(func() { fmt.Fprintf(out, "flower: open %s\n", h.url) })
}

// ended tells the page how the wake ended: the verdict (or why it
// stopped) and its cost. The page then offers the next wake.
func (h *hub) ended(out io.Writer, err error) {
	h.mu.Lock()
	cost := h.cost
	h.mu.Unlock()
	text, ok := "✓ the run is done", err == nil
	if err != nil {
		var ee *exitError
		msg := err.Error()
		if errors.As(err, &ee) && ee.err != nil {
			msg = ee.err.Error()
		}
		text = "✗ " + msg
	}
	text += " · " + model.USD(cost)
	h.events.Publish(event.Event{Kind: event.Step, Text: text,
		Payload: map[string]any{"ended": true, "ok": ok, "cost": cost}})
	h.showURL(out)
	fmt.Fprintln(out, "flower: the run ended; the page stays up to start the next wake (Ctrl-C to exit)")
}

// idleSignals receives Ctrl-C, SIGTERM and SIGHUP for the whole of flower
// serve, so that none arriving between wakes kills it unhandled; while a
// wake runs, its own handler acts on them and these are dropped.
func idleSignals() (<-chan os.Signal, func()) {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	return sig, func() { signal.Stop(sig) }
}

// drain drops the signals the wake's own handler already acted on.
func drain(sig <-chan os.Signal) {
	for {
		select {
		case <-sig:
		default:
			return
		}
	}
}

// waitNext waits for the page to start the next wake (its phrase; empty:
// continue), or for a signal or ctx's end: then ok is false.
func (h *hub) waitNext(ctx context.Context, sig <-chan os.Signal) (phrase string, ok bool) {
	select {
	case p := <-h.next:
		return p, true
	case <-sig:
		return "", false
	case <-ctx.Done():
		return "", false
	}
}

func (h *hub) wake(text string) error {
	if h.current() != nil {
		return web.ErrBusy
	}
	select {
	case h.next <- text:
		return nil
	default:
		return web.ErrBusy // the next wake is already starting
	}
}

func (h *hub) interrupt(text string) {
	if r := h.current(); r != nil {
		r.rt.Interrupt(text)
	}
}

func (h *hub) oracle(ctx context.Context, q string) (string, error) {
	r := h.current()
	if r == nil {
		return "", errors.New("no run is going on: start the next wake first")
	}
	return r.oracle.Ask(ctx, q)
}

// hubChannel is the human channel of the wake running; between wakes
// nothing is asked and a note has nobody to read it.
type hubChannel struct{ h *hub }

func (c hubChannel) ch() *human.Channel {
	if r := c.h.current(); r != nil {
		return r.ch
	}
	return nil
}

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
