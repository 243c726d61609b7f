package human

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/flower-run/flower/store"
)

// The journal keeps in the store what the channel must not lose to a
// crash (seed 002: the inbox survives; issue 9): the person's mail, which
// call of the inbox tool read which mail, the asks and how they settled.
// Records are note entries under one key of their own, keyed by the tool
// call: the ask or inbox call that a crash cut runs again on resume with
// the same call id and finds what it did, so an answered question is never
// asked again and mail read by a call that left no result is read again by
// it, not lost.
type journal struct {
	s   store.Store
	key string
}

// record is one journal entry's text.
type record struct {
	Type   string    `json:"type"` // mail, read, ask, settled, withdrawn; inbound: answer, decline, interrupt, applied
	Call   string    `json:"call,omitempty"`
	ID     string    `json:"id,omitempty"` // mail: its id
	Text   string    `json:"text,omitempty"`
	At     time.Time `json:"at,omitzero"`
	Mails  []string  `json:"mails,omitempty"` // read: the ids of the mail the call read
	Ask    *Ask      `json:"ask,omitempty"`
	State  State     `json:"state,omitempty"`
	Answer string    `json:"answer,omitempty"`
	// Via is "store" on what another process put in the journal for the
	// driver to apply (inbound.go); Applied lists the inbound ids applied.
	Via     string   `json:"via,omitempty"`
	Applied []string `json:"applied,omitempty"`
}

func (j *journal) put(r record) error {
	if j == nil {
		return nil
	}
	e, err := j.entry(r)
	if err != nil {
		return err
	}
	if err := j.s.Append(context.Background(), e); err != nil {
		return fmt.Errorf("journal %s: %w", r.Type, err)
	}
	return nil
}

func (j *journal) load(ctx context.Context) ([]record, error) {
	entries, err := j.s.Load(ctx, j.key)
	if err != nil {
		return nil, fmt.Errorf("load the human journal: %w", err)
	}
	out := make([]record, 0, len(entries))
	for _, e := range entries {
		var r record
		if err := json.Unmarshal([]byte(e.Text), &r); err != nil {
			return nil, fmt.Errorf("human journal entry %s: %w", e.UUID, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// memory is what the journal restores: unread mail, each call's read mail
// and each call's settlement. Ask records are for people reading the
// store: an ask a crash cut before it settled is simply asked again.
type memory struct {
	inbox   []mail
	reads   map[string][]mail
	settled map[string]settlement
}

func restore(records []record) memory {
	m := memory{reads: map[string][]mail{}, settled: map[string]settlement{}}
	byID, read := map[string]mail{}, map[string]bool{}
	var order []string
	for _, r := range records {
		switch r.Type {
		case "mail":
			byID[r.ID] = mail{id: r.ID, at: r.At, text: r.Text}
			order = append(order, r.ID)
		case "read":
			for _, id := range r.Mails {
				read[id] = true
				m.reads[r.Call] = append(m.reads[r.Call], byID[id])
			}
		case "settled":
			m.settled[r.Call] = settlement{state: r.State, text: r.Answer}
		}
	}
	for _, id := range order {
		if !read[id] {
			m.inbox = append(m.inbox, byID[id])
		}
	}
	return m
}

// Restore loads what an earlier process of this channel's journal left:
// unread mail goes back to the inbox, and calls cut by a crash find their
// asks and reads. Call it once, after New and before the run.
func (c *Channel) Restore(ctx context.Context) error {
	if c.journal == nil {
		return nil
	}
	records, err := c.journal.load(ctx)
	if err != nil {
		return err
	}
	m := restore(records)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inbox = append(m.inbox, c.inbox...)
	c.reads, c.settledBy = m.reads, m.settled
	for _, r := range records {
		if r.Type == "mail" {
			c.mailIDs[r.ID] = true
		}
	}
	return nil
}
