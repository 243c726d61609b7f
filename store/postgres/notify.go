package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/flower-run/flower/store"
)

// Notifications let one process wake another that waits on the database
// (issue 14: an answer given through any flower serve reaches the worker
// that drives the run at once, not at its next poll). They are PostgreSQL's
// LISTEN/NOTIFY: delivered after the notifier's commit, to every session
// listening on the channel, and lost for a session that is not connected
// at that instant; so a listener always also polls, and a notification
// only says "look now".

// InboundChannel is store.InboundChannel, where drivers listen for
// records put in their human journal.
const InboundChannel = store.InboundChannel

// Notify sends payload on channel. Call it after the commit of what it
// announces, so the listener finds it.
func (d *DB) Notify(ctx context.Context, channel, payload string) error {
	if _, err := d.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload); err != nil {
		return fmt.Errorf("notify %s: %w", channel, err)
	}
	return nil
}

// Listen calls fn with the payload of each notification on channel until
// ctx ends, on a connection of its own. A lost connection is made again,
// after a pause that doubles up to 30 s; what was sent meanwhile is lost,
// so fn is also called with "" each time the connection listens again:
// look now. fn runs on Listen's goroutine: it must not block.
func (d *DB) Listen(ctx context.Context, channel string, fn func(payload string)) {
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := d.listenOnce(ctx, channel, fn)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			pause = 100 * time.Millisecond
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, 30*time.Second)
	}
}

// listenOnce listens on one connection until it fails or ctx ends.
func (d *DB) listenOnce(ctx context.Context, channel string, fn func(string)) error {
	pc, err := d.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	conn := pc.Hijack() // LISTEN belongs to the session: never back to the pool
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `SELECT pg_catalog.set_config('application_name', 'flower listen', false)`); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `LISTEN `+quoteIdent(channel)); err != nil {
		return err
	}
	fn("") // listening now: what was sent before is for the caller's poll
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn(n.Payload)
	}
}

// quoteIdent quotes a channel name as an SQL identifier.
func quoteIdent(s string) string {
	out := []byte{'"'}
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			out = append(out, '"')
		}
		out = append(out, s[i])
	}
	return string(append(out, '"'))
}
