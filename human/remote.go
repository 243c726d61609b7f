package human

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/flower-run/flower/store"
)

// ErrNoAsk is a Remote answer or decline naming an ask that was never
// asked (in the window the Remote sees).
var ErrNoAsk = errors.New("no such ask")

// Remote is a run's human channel seen from another process, through the
// store: what is asked and not settled, and the person's answers, mail
// and interrupts, appended as inbound records for the run's driver to
// apply (inbound.go). It never waits for the driver: a record is durable
// when a method returns, and reaches the driver within its poll, at once
// when the store notifies.
type Remote struct {
	Store store.Store
	Key   string    // the journal key: the driver channel's JournalKey
	Since time.Time // asks from before are not the run's (zero: all)
	Now   func() time.Time
}

// Pending lists the asks waiting, oldest first, derived from the journal
// alone: per tool call its newest record is an ask, not a settlement or a
// withdrawal. An ask whose process died waits too: the next process asks
// that call again, and an answer given meanwhile settles it at once.
func (r Remote) Pending(ctx context.Context) ([]Ask, error) {
	records, err := r.journal().load(ctx)
	if err != nil {
		return nil, err
	}
	open := r.pending(records)
	out := make([]Ask, len(open))
	for i, o := range open {
		out[i] = o.ask
	}
	return out, nil
}

// openAsk is a waiting ask with its call and journal position.
type openAsk struct {
	ask  Ask
	call string
	at   int
}

func (r Remote) pending(records []record) []openAsk {
	byCall := map[string]openAsk{}
	for i, rec := range records {
		switch {
		case rec.Call == "":
		case rec.Type == "ask" && rec.Ask != nil:
			if rec.Ask.Asked.Before(r.Since) {
				continue
			}
			a := *rec.Ask
			a.State = Asked
			byCall[rec.Call] = openAsk{ask: a, call: rec.Call, at: i}
		case rec.Type == "settled" || rec.Type == "withdrawn":
			delete(byCall, rec.Call)
		}
	}
	out := slices.Collect(maps.Values(byCall))
	slices.SortFunc(out, func(a, b openAsk) int { return a.at - b.at })
	return out
}

// Answer appends the answer text (an option's number picks the option)
// to the waiting ask id. ok is false when that ask is no longer waiting;
// an id never asked is ErrNoAsk.
func (r Remote) Answer(ctx context.Context, id, text string) (ok bool, err error) {
	return r.settle(ctx, "answer", id, text)
}

// Decline appends a decline of the waiting ask id, with reason.
func (r Remote) Decline(ctx context.Context, id, reason string) (ok bool, err error) {
	return r.settle(ctx, "decline", id, reason)
}

func (r Remote) settle(ctx context.Context, kind, id, text string) (bool, error) {
	j := r.journal()
	records, err := j.load(ctx)
	if err != nil {
		return false, err
	}
	var a *openAsk
	for _, p := range r.pending(records) {
		if p.ask.ID == id {
			a = &p // the newest of that id: ids start again in each process
		}
	}
	if a == nil {
		for _, rec := range records {
			if rec.Type == "ask" && rec.Ask != nil && rec.Ask.ID == id && !rec.Ask.Asked.Before(r.Since) {
				return false, nil
			}
		}
		return false, fmt.Errorf("%w: %s", ErrNoAsk, id)
	}
	if kind == "answer" {
		text = a.ask.Pick(text)
	}
	if err := j.put(record{Type: kind, Via: viaStore, ID: uuid.NewString(), Call: a.call, Text: text, At: r.now()}); err != nil {
		return false, err
	}
	return true, nil
}

// Send appends mail for the agent's inbox. Blank text is ignored.
func (r Remote) Send(ctx context.Context, text string) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return r.journal().put(record{Type: "mail", Via: viaStore, ID: uuid.NewString(), Text: text, At: r.now()})
}

// Interrupt appends an interrupt: the process driving the run stops at
// its next message boundary and continues with text (empty: stops).
func (r Remote) Interrupt(ctx context.Context, text string) error {
	return r.journal().put(record{Type: "interrupt", Via: viaStore, ID: uuid.NewString(), Text: text, At: r.now()})
}

func (r Remote) journal() *journal { return &journal{s: r.Store, key: r.Key} }

func (r Remote) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
