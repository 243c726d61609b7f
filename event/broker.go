package event

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Broker defaults.
const (
	// DefaultKeep is how many of the latest events a Broker keeps for
	// replay (R6.7).
	DefaultKeep = 2000
	// DefaultBuffer is a subscriber's buffer when Subscribe is given n <= 0.
	DefaultBuffer = 256
)

// Numbered is an event with its place in the stream: Seq counts from 1 in
// publishing order. It marshals as {seq, kind, text, tool, payload}.
type Numbered struct {
	Seq int `json:"seq"`
	Event
}

// Broker fans one event stream out to any number of consumers without ever
// letting one of them slow the run down (R6.9): Publish never blocks, each
// subscriber has a bounded buffer, and an event that does not fit is
// dropped for that subscriber, counted, and reported once. It also keeps
// the latest events, numbered, so a client that was away can catch up with
// Since.
//
// Publish is the run's Sink. Every method is safe from any goroutine.
type Broker struct {
	// mu guards seq, ring, subs and closed. Publish holds it while it
	// numbers an event and offers it to every subscriber, so all
	// subscribers see events in Seq order.
	mu     sync.Mutex
	seq    int
	base   int        // the seq before this broker's first event (NewBrokerAt)
	ring   []Numbered // circular: event n lives at (n-1) % len(ring)
	subs   map[*Subscription]struct{}
	closed bool

	funcs sync.WaitGroup // goroutines started by SubscribeFunc
}

// NewBroker returns a broker that keeps the latest keep events for replay
// (DefaultKeep when keep <= 0).
func NewBroker(keep int) *Broker {
	if keep <= 0 {
		keep = DefaultKeep
	}
	return &Broker{ring: make([]Numbered, keep), subs: map[*Subscription]struct{}{}}
}

// Publish numbers e, keeps it for replay and offers it to every
// subscriber. It never blocks: a subscriber whose buffer is full misses e.
// The first miss of each subscriber is published as an Error event (with
// payload source "broker"), so the other consumers see that one of them
// is falling behind.
func (b *Broker) Publish(e Event) {
	var slow []*Subscription
	b.mu.Lock()
	b.seq++
	n := Numbered{Seq: b.seq, Event: e}
	b.ring[(b.seq-1)%len(b.ring)] = n
	for s := range b.subs {
		select {
		case s.c <- n:
		default:
			if s.dropped.Add(1) == 1 {
				slow = append(slow, s)
			}
		}
	}
	b.mu.Unlock()
	for _, s := range slow {
		b.Publish(Event{Kind: Error, Text: fmt.Sprintf("event consumer %q is too slow: dropping events it cannot take", s.name),
			Payload: map[string]any{"source": "broker", "subscriber": s.name}})
	}
}

// Since returns the kept events numbered after after, oldest first. gap
// reports that the client missed events: some after after are no longer
// kept, or after is beyond the newest event (the client counted on another
// broker, e.g. before a restart), in which case it gets every kept event.
func (b *Broker) Since(after int) (events []Numbered, gap bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	after = max(after, 0)
	oldest := max(b.seq-len(b.ring)+1, b.base+1)
	if after > b.seq || after < oldest-1 {
		after, gap = oldest-1, true
	}
	for n := after + 1; n <= b.seq; n++ {
		events = append(events, b.ring[(n-1)%len(b.ring)])
	}
	return events, gap
}

// Last is the Seq of the newest event, 0 before the first.
func (b *Broker) Last() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seq
}

// Subscription is one consumer's feed. C delivers events in Seq order and
// is closed when the subscription ends: its context ended, Cancel was
// called, or the broker closed.
type Subscription struct {
	C <-chan Numbered

	name    string
	c       chan Numbered
	b       *Broker
	dropped atomic.Int64
	end     sync.Once
	unwatch func() bool // stops watching the context; set under the broker's mu
}

// Subscribe registers a consumer with a buffer of n events (DefaultBuffer
// when n <= 0) until ctx ends. name identifies it in drop reports.
func (b *Broker) Subscribe(ctx context.Context, name string, n int) *Subscription {
	if n <= 0 {
		n = DefaultBuffer
	}
	c := make(chan Numbered, n)
	s := &Subscription{C: c, c: c, name: name, b: b}
	b.mu.Lock()
	if b.closed {
		close(c)
		b.mu.Unlock()
		return s
	}
	b.subs[s] = struct{}{}
	s.unwatch = context.AfterFunc(ctx, s.Cancel)
	b.mu.Unlock()
	return s
}

// Cancel ends the subscription and closes C. Events already buffered are
// still delivered. Safe to call more than once.
func (s *Subscription) Cancel() {
	s.end.Do(func() {
		s.b.mu.Lock()
		defer s.b.mu.Unlock()
		if s.unwatch != nil {
			s.unwatch()
		}
		if _, ok := s.b.subs[s]; ok {
			delete(s.b.subs, s)
			close(s.c)
		}
	})
}

// Dropped is how many events this subscriber missed because its buffer
// was full.
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// SubscribeFunc calls fn with every event, in its own goroutine, until
// ctx ends (or the broker closes). A panic in fn is recovered and reported
// once as an Error event; fn then goes on receiving events. Close waits for
// the goroutine.
func (b *Broker) SubscribeFunc(ctx context.Context, name string, n int, fn func(Numbered)) *Subscription {
	s := b.Subscribe(ctx, name, n)
	b.funcs.Add(1)
	go func() {
		defer b.funcs.Done()
		reported := false
		for e := range s.C {
			if v, panicked := call(fn, e); panicked && !reported {
				reported = true
				b.Publish(Event{Kind: Error, Text: fmt.Sprintf("event consumer %q failed: %v", name, v),
					Payload: map[string]any{"source": "broker", "subscriber": name}})
			}
		}
	}()
	return s
}

// call runs fn(e), turning a panic into a value.
func call(fn func(Numbered), e Numbered) (v any, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			v, panicked = r, true
		}
	}()
	fn(e)
	return nil, false
}

// Close ends every subscription and waits for the SubscribeFunc
// goroutines to deliver what they had buffered. Publish and Since keep
// working; new subscriptions end at once.
func (b *Broker) Close() {
	b.mu.Lock()
	b.closed = true
	subs := make([]*Subscription, 0, len(b.subs))
	for s := range b.subs {
		subs = append(subs, s)
	}
	b.mu.Unlock()
	for _, s := range subs {
		s.Cancel()
	}
	b.funcs.Wait()
}
