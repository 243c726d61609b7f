package web

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/store"
)

// Steering makes the wakes of one workspace on a database store steerable
// from any flower serve --runs attached to that database (issue 14): while
// a run goes on, its human channel follows the workspace's journal
// (Follow), and with stored events the run's events are kept in the
// workspace's stored stream (Stream), so GET /runs/ID/events shows them.
// Every driver on a database store but flower serve (which keeps one
// stream across its wakes) steers its wakes through one.
type Steering struct {
	ws          string
	storeEvents bool
	log         io.Writer // one line per error

	mu     sync.Mutex // guards stream
	stream *Stream    // the attached wake's, nil between wakes
}

// NewSteering steers the wakes of workspace ws; storeEvents keeps their
// events in the store too. Errors go to log.
func NewSteering(ws string, storeEvents bool, log io.Writer) *Steering {
	return &Steering{ws: ws, storeEvents: storeEvents, log: log}
}

// Publish is the wakes' sink: it stores e while a wake with stored events
// is attached, and drops it otherwise.
func (s *Steering) Publish(e event.Event) {
	s.mu.Lock()
	st := s.stream
	s.mu.Unlock()
	if st != nil {
		st.Publish(e)
	}
}

// Attach steers the run whose human channel is ch, interrupt its
// runtime's, driven on st (read once the workspace is leased, so no other
// driver numbers the stream on at the same time). detach stops that and
// waits, and ends the stored stream: call it before st closes.
func (s *Steering) Attach(ctx context.Context, ch *human.Channel, interrupt func(string), st store.Store) (detach func()) {
	var stream *Stream
	if s.storeEvents {
		stream = StoredStream(ctx, st, s.ws, s.log)
		s.mu.Lock()
		s.stream = stream
		s.mu.Unlock()
	}
	stopFollow := Follow(ctx, ch, interrupt, st, s.ws, s.log)
	return func() {
		stopFollow()
		if stream == nil {
			return
		}
		s.mu.Lock()
		s.stream = nil
		s.mu.Unlock()
		if err := stream.End(); err != nil {
			s.logErr(err)
		}
	}
}

func (s *Steering) logErr(err error) { fmt.Fprintln(s.log, "flower:", err) }

// Wrap makes fe, the front end of a wake of the Steering's workspace,
// also steerable through the Steering: every event is published to it,
// and the run is attached to it for as long as fe is.
func (s *Steering) Wrap(fe flower.Front) flower.Front {
	inner, attach := fe.Sink, fe.Attach
	fe.Sink = func(e event.Event) { inner(e); s.Publish(e) }
	fe.Attach = func(ctx context.Context, run flower.WakeRun) (func(), error) {
		stop := s.Attach(ctx, run.Channel, run.Runtime.Interrupt, run.Store)
		detach, err := attach(ctx, run)
		if err != nil {
			stop()
			return nil, err
		}
		return func() { detach(); stop() }, nil
	}
	return fe
}
