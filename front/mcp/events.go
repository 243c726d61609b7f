package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flower-run/flower/event"
)

// Limits of one task_events answer.
const (
	maxEvents = 200  // events per answer: more says there are others
	maxText   = 2000 // bytes of an event's text, unless all
	maxWait   = 60 * time.Second
)

// Events is task_events' structured answer.
type Events struct {
	Events []Event `json:"events" jsonschema:"the events after seq after, oldest first"`
	// Last is the seq to pass as after next time: the newest event
	// looked at, shown or left out.
	Last int  `json:"last" jsonschema:"pass it as after next time"`
	Gap  bool `json:"gap,omitempty" jsonschema:"some events after after are no longer kept"`
	More bool `json:"more,omitempty" jsonschema:"more events are there already: ask again with after=last"`
	// Summary counts the events looked at by kind, those left out too, so
	// a client sees what happened without asking for everything.
	Summary string `json:"summary,omitempty" jsonschema:"the events looked at, counted by kind; what was left out and how to see it"`
	State   string `json:"state" jsonschema:"the task's state: running, waiting, passed, failed or stopped"`
	Ended   bool   `json:"ended" jsonschema:"the task is over: no event follows (task_status says how it ended)"`
}

// Event is one event of a task: what the agent said and did, its
// questions, its steps, the result.
type Event struct {
	Seq     int            `json:"seq"`
	Kind    string         `json:"kind" jsonschema:"text, tool_call, tool_result, ask, step, result, error, interrupt...; delta and usage with all"`
	Text    string         `json:"text,omitempty"`
	Tool    string         `json:"tool,omitempty"`
	Payload map[string]any `json:"payload,omitempty"`
}

// compact is what task_events shows by default: no deltas or usage
// records (the whole text and the cost follow elsewhere) unless asked for
// by kind, texts clipped, payloads only where they say more than the text.
func compact(n event.Numbered, asked bool) (Event, bool) {
	e := Event{Seq: n.Seq, Kind: string(n.Kind), Text: n.Text, Tool: n.Tool}
	switch n.Kind {
	case event.Delta, event.Usage:
		e.Payload = n.Payload
		return e, asked
	case event.Ask, event.Step, event.Result, event.Error:
		e.Payload = n.Payload
	}
	if len(e.Text) > maxText {
		e.Text = strings.ToValidUTF8(e.Text[:maxText], "") + "…"
	}
	return e, true
}

// query is what task_events was asked for.
type query struct {
	after int
	all   bool            // deltas, usage records, whole texts and payloads
	kinds map[string]bool // only these kinds; nil: every kind shown
	limit int             // events per answer, at most maxEvents
}

func newQuery(in eventsIn) (query, error) {
	q := query{after: in.After, all: in.All, limit: maxEvents}
	if in.Limit > 0 {
		q.limit = min(in.Limit, maxEvents)
	}
	for _, k := range in.Kinds {
		if !knownKind(k) {
			return q, fmt.Errorf("kinds: %q is not an event kind; use some of %s", k, strings.Join(kindNames(), ", "))
		}
		if q.kinds == nil {
			q.kinds = map[string]bool{}
		}
		q.kinds[k] = true
	}
	return q, nil
}

func knownKind(k string) bool {
	return slices.Contains(kindNames(), k)
}

func kindNames() []string {
	out := make([]string, 0, len(event.Kinds))
	for _, k := range event.Kinds {
		out = append(out, string(k))
	}
	return out
}

// eventsAfter answers task_events at once.
func (t *task) eventsAfter(q query) Events {
	evs, gap := t.events.Since(q.after)
	return page(evs, gap, q)
}

// page is the answer of task_events over evs, the events after q.after;
// gap says some are no longer kept.
func page(evs []event.Numbered, gap bool, q query) (out Events) {
	out = Events{Events: []Event{}, Last: max(q.after, 0), Gap: gap}
	var shown, left counts
	defer func() { out.Summary = summary(shown, left) }()
	for _, n := range evs {
		if len(out.Events) == q.limit {
			out.More = true
			break
		}
		out.Last = n.Seq
		e := Event{Seq: n.Seq, Kind: string(n.Kind), Text: n.Text, Tool: n.Tool, Payload: n.Payload}
		ok := q.kinds == nil || q.kinds[e.Kind]
		if ok && !q.all {
			e, ok = compact(n, q.kinds != nil)
		}
		if ok {
			out.Events = append(out.Events, e)
			shown.add(e.Kind)
		} else {
			left.add(e.Kind)
		}
	}
	return out
}

// counts are events by kind, in the order first seen.
type counts struct {
	kinds []string
	n     map[string]int
}

func (c *counts) add(kind string) {
	if c.n == nil {
		c.n = map[string]int{}
	}
	if c.n[kind] == 0 {
		c.kinds = append(c.kinds, kind)
	}
	c.n[kind]++
}

func (c counts) String() string {
	parts := make([]string, 0, len(c.kinds))
	for _, k := range c.kinds {
		parts = append(parts, fmt.Sprintf("%d %s", c.n[k], k))
	}
	return strings.Join(parts, ", ")
}

func summary(shown, left counts) string {
	out := "no new events"
	if len(shown.kinds) > 0 {
		out = "shown: " + shown.String()
	}
	if len(left.kinds) > 0 {
		out += "; left out: " + left.String() + " (all:true or kinds shows them)"
	}
	return out
}

// wait answers task_events: the events after after, waiting up to wait
// for one to show (or for the task to end) when there is none yet.
func (t *task) wait(ctx context.Context, q query, wait time.Duration) Events {
	timer := time.NewTimer(min(max(wait, 0), maxWait))
	defer timer.Stop()
	for {
		t.mu.Lock()
		changed, state := t.changed, t.state
		t.mu.Unlock()
		out := t.eventsAfter(q)
		out.State, out.Ended = state, state != "" && !out.More
		if len(out.Events) > 0 || state != "" || out.More || wait <= 0 {
			return t.withState(out)
		}
		q.after = out.Last // nothing shown yet: what was left out stays out
		select {
		case <-changed:
		case <-timer.C:
			return t.withState(out)
		case <-ctx.Done():
			return t.withState(out)
		}
	}
}

// withState fills in a running task's state (running or waiting).
func (t *task) withState(out Events) Events {
	if out.State == "" {
		out.State = StateRunning
		t.mu.Lock()
		ch := t.ch
		t.mu.Unlock()
		if ch != nil && len(ch.Pending()) > 0 {
			out.State = StateWaiting
		}
	}
	return out
}
