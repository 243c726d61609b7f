package human

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/store"
)

// Inbound records (R12.4): the person's answers, declines, mail and interrupts
// that reach a run through the store instead of through this process
// (issue 14: flower serve --runs on any machine, the run driven by a
// worker on another). Why the journal, and not a table or a message bus:
// the journal already is the truth of the channel (what was asked, how it
// settled, which mail was read), and it is append-only, so one more kind
// of record needs no schema, survives every crash the journal does, and
// reads the same on SQLite and PostgreSQL. A Remote (remote.go) appends
// them; the driving process follows the journal (Follower) and applies
// each exactly once:
//
//   - answer / decline name the ask's tool call, which a crash does not
//     change (the call is asked again on resume with the same id). The
//     settled record already makes a second settlement impossible, so
//     they need no mark of their own: an answer to a call that settled is
//     nothing; one to a call not asked yet (its driver died and the next
//     has not got there) waits in memory and settles the call as it asks.
//   - mail is a mail record like the one Send writes, with its own id, so
//     Restore puts it in the inbox after a crash like any other. An
//     applied record says it was also appended to the brief and announced.
//   - interrupt is marked applied before it is applied: an interrupt is
//     meant for the process running now, so after a crash it is never
//     applied again. One that arrived while no process followed (before
//     the driver started, or while it was dead) found the run stopped
//     already: its words, if any, reach the agent as mail instead, so
//     nothing the person said is lost.

// DefaultPoll is how often a Follower reads the journal when nothing
// nudges it: the fallback of a store that cannot notify (and of a lost
// notification connection).
const DefaultPoll = 2 * time.Second

// viaStore marks the records another process put in the journal.
const viaStore = "store"

// FollowOptions configure a Follower.
type FollowOptions struct {
	// Interrupt stops the run at its next message boundary and continues
	// it with text (agent.Runtime.Interrupt). Nil: interrupts are kept
	// for the next process, as mail.
	Interrupt func(text string)
	// Nudge says that the journal may have new records (a PostgreSQL
	// notification): the Follower reads it at once. Nil: polling only.
	Nudge <-chan struct{}
	// Poll is how often the journal is read anyway; zero is DefaultPoll.
	Poll time.Duration
}

// Follower applies the inbound records of a channel's journal. Make one
// with Follow after Restore; run it with Run, or step it with Pass.
type Follower struct {
	c       *Channel
	o       FollowOptions
	seen    map[string]bool // entry uuids read already
	applied map[string]bool // inbound ids marked applied
	passes  int
}

// Follow returns the follower of c's journal. c must keep a journal.
func (c *Channel) Follow(o FollowOptions) (*Follower, error) {
	if c.journal == nil {
		return nil, fmt.Errorf("follow the human journal: the channel keeps none (Options.Store)")
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	return &Follower{c: c, o: o, seen: map[string]bool{}, applied: map[string]bool{}}, nil
}

// Run reads the journal now, then on every nudge and every Poll, until
// ctx ends. A failed read is reported as an error event and tried again.
func (f *Follower) Run(ctx context.Context) {
	for {
		if err := f.Pass(ctx); err != nil && ctx.Err() == nil {
			f.c.emitError("follow the journal", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-f.o.Nudge:
		case <-f.c.clock.After(f.o.Poll):
		}
	}
}

// Pass reads the journal once and applies what is new in it. The first
// pass also finds what arrived while no process followed.
func (f *Follower) Pass(ctx context.Context) error {
	entries, err := f.c.journal.s.Load(ctx, f.c.journal.key)
	if err != nil {
		return fmt.Errorf("load the human journal: %w", err)
	}
	// Seen by uuid, not by position: on PostgreSQL two writers' entries
	// may become visible out of their seq order.
	var fresh []record
	for _, e := range entries {
		if f.seen[e.UUID] {
			continue
		}
		var r record
		if err := json.Unmarshal([]byte(e.Text), &r); err != nil {
			return fmt.Errorf("human journal entry %s: %w", e.UUID, err)
		}
		f.seen[e.UUID] = true
		if r.Type == "applied" {
			for _, id := range r.Applied {
				f.applied[id] = true
			}
		}
		fresh = append(fresh, r)
	}
	stale := f.passes == 0
	f.passes++
	for _, r := range fresh {
		if r.Via != viaStore {
			continue
		}
		switch r.Type {
		case "answer":
			f.c.deliver(r.Call, settlement{state: Answered, text: r.Text})
		case "decline":
			f.c.deliver(r.Call, settlement{state: Declined, text: r.Text})
		case "mail":
			f.mail(r)
		case "interrupt":
			f.interrupt(r, stale)
		}
	}
	return nil
}

// deliver settles the waiting ask of call with s, or keeps s for the call
// if it has not asked yet; a call already settled ignores it, as does
// one with an answer kept already (the first answer wins).
func (c *Channel) deliver(call string, s settlement) {
	if call == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, done := c.settledBy[call]; done {
		return
	}
	i := slices.IndexFunc(c.pending, func(w *waiting) bool { return w.call == call })
	if i < 0 {
		if _, kept := c.early[call]; !kept {
			c.early[call] = s
		}
		return
	}
	w := c.pending[i]
	c.pending = slices.Delete(c.pending, i, i+1)
	w.done <- s
}

// mail puts mail sent through the store in the inbox, unless Restore did,
// and, once, appends it to the brief and announces it. The brief comes
// before the applied mark: a crash between them appends it twice rather
// than never.
func (f *Follower) mail(r record) {
	m := mail{id: r.ID, at: r.At, text: r.Text}
	f.c.mu.Lock()
	if !f.c.mailIDs[m.id] {
		f.c.mailIDs[m.id] = true
		f.c.inbox = append(f.c.inbox, m)
	}
	f.c.mu.Unlock()
	if f.applied[m.id] {
		return
	}
	f.c.announce(m)
	f.mark(m.id)
}

// announce appends mail to the brief and emits its event, as Send does.
func (c *Channel) announce(m mail) {
	if err := c.appendAmend(m); err != nil {
		c.emitError("amend the brief", err)
	}
	c.emit(event.Event{Kind: event.Ask, Text: m.text, Payload: map[string]any{
		"kind": "mail", "text": m.text, "at": m.at.Format(time.RFC3339),
	}})
}

// interrupt applies an interrupt once: marked first, then given to the
// run. A stale one (there before this process followed) is not applied:
// its words become mail, in the same commit as its mark.
func (f *Follower) interrupt(r record, stale bool) {
	if f.applied[r.ID] {
		return
	}
	if stale || f.o.Interrupt == nil {
		f.interruptAsMail(r)
		return
	}
	if !f.mark(r.ID) {
		return // not marked: not applied, rather than maybe twice
	}
	f.o.Interrupt(r.Text)
	f.c.emit(event.Event{Kind: event.Text, Text: "interrupt sent through the store: stopping at the next message boundary",
		Payload: map[string]any{"source": "human", "interrupt": r.ID}})
}

func (f *Follower) interruptAsMail(r record) {
	j := f.c.journal
	mark, err := j.entry(record{Type: "applied", Applied: []string{r.ID}})
	if err != nil {
		f.c.emitError("keep the interrupt", err)
		return
	}
	entries := []store.Entry{mark}
	m := mail{id: "interrupt:" + r.ID, at: r.At, text: r.Text}
	if r.Text != "" {
		me, err := j.entry(record{Type: "mail", ID: m.id, Text: m.text, At: m.at})
		if err != nil {
			f.c.emitError("keep the interrupt", err)
			return
		}
		entries = append(entries, me)
	}
	if err := j.s.Append(context.Background(), entries...); err != nil {
		f.c.emitError("keep the interrupt", err)
		return
	}
	f.applied[r.ID] = true
	if r.Text == "" {
		return
	}
	f.c.mu.Lock()
	f.c.mailIDs[m.id] = true
	f.c.inbox = append(f.c.inbox, m)
	f.c.mu.Unlock()
	f.c.announce(m)
}

// mark journals that the inbound record id is applied.
func (f *Follower) mark(id string) bool {
	if err := f.c.journal.put(record{Type: "applied", Applied: []string{id}}); err != nil {
		f.c.emitError("mark an inbound record applied", err)
		return false
	}
	f.applied[id] = true
	return true
}
