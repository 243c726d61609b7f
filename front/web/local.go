package web

import (
	"context"
	"fmt"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/human"
)

// local is the run of this process as the API steers it: its human
// channel, its interrupt and its event broker, with the stored History
// behind the broker's window (flower serve).
type local struct{ opts *Options }

var _ Run = local{}

func (l local) Asks(context.Context) ([]human.Ask, error) { return l.opts.Channel.Pending(), nil }

// known reports whether the channel issued id, when it can tell: an ask
// of another process is unknown here. Once the run has ended nothing
// waits, whatever the id: ok:false, as for a run of a database no longer
// in flight.
func (l local) known(id string) error {
	if e, ok := l.opts.Channel.(ender); ok && e.Ended() {
		return errEnded
	}
	if k, ok := l.opts.Channel.(interface{ Known(string) bool }); ok && !k.Known(id) {
		return fmt.Errorf("%w: %s", human.ErrNoAsk, id)
	}
	return nil
}

func (l local) Answer(_ context.Context, id, text string) (bool, error) {
	if err := l.known(id); err != nil {
		return false, ignoreEnded(err)
	}
	for _, a := range l.opts.Channel.Pending() {
		if a.ID == id {
			text = a.Pick(text) // an option's number picks it, as the terminal does
		}
	}
	return l.opts.Channel.Answer(id, text), nil
}

func (l local) Decline(_ context.Context, id, reason string) (bool, error) {
	if err := l.known(id); err != nil {
		return false, ignoreEnded(err)
	}
	return l.opts.Channel.Decline(id, reason), nil
}

var errEnded = fmt.Errorf("%w: the run has ended; start the next wake first", ErrEnded)

// ignoreEnded turns an ended run into a settled ask: ok:false.
func ignoreEnded(err error) error {
	if err == errEnded {
		return nil
	}
	return err
}

// ender is a Channel that can say nothing drives the run any more (flower
// serve's, between wakes): a note or an interrupt is then 409, as for a
// run of a database that is no longer in flight.
type ender interface {
	Ended() bool
}

func (l local) ended() error {
	if e, ok := l.opts.Channel.(ender); ok && e.Ended() {
		return errEnded
	}
	return nil
}

func (l local) Send(_ context.Context, text string) error {
	if err := l.ended(); err != nil {
		return err
	}
	l.opts.Channel.Send(text)
	return nil
}

func (l local) Interrupt(_ context.Context, text string) error {
	if l.opts.Interrupt == nil {
		return fmt.Errorf("%w: this server cannot interrupt the run", ErrCannot)
	}
	if err := l.ended(); err != nil {
		return err
	}
	l.opts.Interrupt(text)
	return nil
}

func (l local) Events(ctx context.Context, after int) ([]event.Numbered, bool, error) {
	ns, gap := since(ctx, l.opts.Events, l.opts.History, after)
	return ns, gap, nil
}
