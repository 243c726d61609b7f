package web

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/store"
)

// listener is a store that can wake a process on a notification
// (store/postgres).
type listener interface {
	Listen(ctx context.Context, channel string, fn func(payload string))
}

// Follow makes ch, the human channel of a run in workspace ws driven on
// store s, steerable by Stored from any process until stop is called
// (stop waits): it follows the workspace's human journal for answers,
// mail and interrupts (human.Follower), woken by a notification on
// InboundChannel when s can listen, else every poll. interrupt is the
// runtime's. Errors go to log.
func Follow(ctx context.Context, ch *human.Channel, interrupt func(string), s store.Store, ws string, log io.Writer) (stop func()) {
	nudge := make(chan struct{}, 1)
	f, err := ch.Follow(human.FollowOptions{Interrupt: interrupt, Nudge: nudge, Poll: pollOf(s)})
	if err != nil {
		return func() {}
	}
	// The first pass before the run starts: what is in the journal by then
	// arrived while no process followed (an interrupt of it is stale).
	if err := f.Pass(ctx); err != nil {
		fmt.Fprintln(log, "flower: follow the human journal:", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if l, ok := s.(listener); ok {
		key := store.SideLog(ws, store.HumanJournal)
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Listen(ctx, InboundChannel, func(p string) {
				if p == key || p == "" {
					select {
					case nudge <- struct{}{}:
					default:
					}
				}
			})
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		f.Run(ctx)
	}()
	return func() { cancel(); wg.Wait() }
}

// localPoll is how often a run on a store that cannot notify (SQLite)
// reads its journal: an answer given through another process (flower
// serve, flower mcp, the runs API) waited up to human.DefaultPoll, 2 s,
// for the driver to see it. A read of the journal in a local file costs
// microseconds.
const localPoll = 250 * time.Millisecond

// pollOf is how often a run on s reads its journal with no nudge: a store
// that notifies (PostgreSQL) nudges on every record, and the poll only
// backs up a lost notification.
func pollOf(s store.Store) time.Duration {
	if _, ok := s.(listener); ok {
		return human.DefaultPoll
	}
	return localPoll
}
