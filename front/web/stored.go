package web

import (
	"context"
	"fmt"
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/event/eventlog"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/store"
)

// InboundChannel is store.InboundChannel, where drivers listen for
// records put in their human journal.
const InboundChannel = store.InboundChannel

// askSlack is how far before its run's creation an ask may be dated and
// still be the run's: the clocks of the machine that submitted and the
// one that drives may differ.
const askSlack = time.Minute

// Stored is a run of a database steered from any process (issue 14,
// R12.4): the asks are derived from the run's human journal, and what is
// posted is appended to it for the run's driver, which applies each
// record exactly once (package human, inbound.go) and is woken by a
// notification; the events are the stored stream of the run's workspace,
// which every driver on a database store keeps. An answer that is ok is
// durable and on its way; whether it beat the ask's timeout the settled
// event says.
type Stored struct {
	DB  DB
	Run store.Run // as read when the request came
}

var _ Run = Stored{}

// remote is the run's human channel, through the database.
func (s Stored) remote() human.Remote {
	return human.Remote{Store: s.DB, Key: store.SideLog(s.Run.Workspace, store.HumanJournal), Since: s.Run.Created.Add(-askSlack)}
}

func (s Stored) live() bool { return s.Run.Status == store.RunInFlight }

// nudge tells the run's driver to read its journal now; a lost
// notification only costs it its poll.
func (s Stored) nudge(ctx context.Context) {
	_ = s.DB.Notify(ctx, InboundChannel, store.SideLog(s.Run.Workspace, store.HumanJournal))
}

// Asks are none once the run is no longer in flight: its asks died with
// its driver.
func (s Stored) Asks(ctx context.Context) ([]human.Ask, error) {
	if !s.live() {
		return nil, nil
	}
	return s.remote().Pending(ctx)
}

func (s Stored) Answer(ctx context.Context, id, text string) (bool, error) {
	return s.settle(ctx, func(rm human.Remote) (bool, error) { return rm.Answer(ctx, id, text) })
}

func (s Stored) Decline(ctx context.Context, id, reason string) (bool, error) {
	return s.settle(ctx, func(rm human.Remote) (bool, error) { return rm.Decline(ctx, id, reason) })
}

func (s Stored) settle(ctx context.Context, do func(human.Remote) (bool, error)) (bool, error) {
	if !s.live() {
		return false, nil
	}
	ok, err := do(s.remote())
	if ok {
		s.nudge(ctx)
	}
	return ok, err
}

func (s Stored) Send(ctx context.Context, text string) error {
	return s.post(ctx, func(rm human.Remote) error { return rm.Send(ctx, text) })
}

func (s Stored) Interrupt(ctx context.Context, text string) error {
	return s.post(ctx, func(rm human.Remote) error { return rm.Interrupt(ctx, text) })
}

// post appends a record for the run, which must be in flight.
func (s Stored) post(ctx context.Context, do func(human.Remote) error) error {
	if !s.live() {
		return fmt.Errorf("%w: run %s is %s", ErrEnded, s.Run.ID, s.Run.Status)
	}
	if err := do(s.remote()); err != nil {
		return err
	}
	s.nudge(ctx)
	return nil
}

// Events are read from the store alone, which keeps every event but
// deltas: there is never a gap.
func (s Stored) Events(ctx context.Context, after int) ([]event.Numbered, bool, error) {
	rd := eventlog.Reader{Log: s.DB, Stream: store.SideLog(s.Run.Workspace, store.EventLog)}
	ns, err := rd.After(ctx, after, maxHistory)
	return ns, false, err
}
