package mcpserver

import (
	"context"
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
	Last  int    `json:"last" jsonschema:"pass it as after next time"`
	Gap   bool   `json:"gap,omitempty" jsonschema:"some events after after are no longer kept"`
	More  bool   `json:"more,omitempty" jsonschema:"more events are there already: ask again with after=last"`
	State string `json:"state" jsonschema:"the task's state: running, waiting, passed, failed or stopped"`
	Ended bool   `json:"ended" jsonschema:"the task is over: no event follows (task_status says how it ended)"`
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
// records (the whole text and the cost follow elsewhere), texts clipped,
// payloads only where they say more than the text.
func compact(n event.Numbered) (Event, bool) {
	e := Event{Seq: n.Seq, Kind: string(n.Kind), Text: n.Text, Tool: n.Tool}
	switch n.Kind {
	case event.Delta, event.Usage:
		return e, false
	case event.Ask, event.Step, event.Result, event.Error:
		e.Payload = n.Payload
	}
	if len(e.Text) > maxText {
		e.Text = strings.ToValidUTF8(e.Text[:maxText], "") + "…"
	}
	return e, true
}

// eventsAfter answers task_events at once.
func (t *task) eventsAfter(after int, all bool) Events {
	out := Events{Events: []Event{}, Last: max(after, 0)}
	evs, gap := t.events.Since(after)
	out.Gap = gap
	for _, n := range evs {
		if len(out.Events) == maxEvents {
			out.More = true
			break
		}
		out.Last = n.Seq
		e := Event{Seq: n.Seq, Kind: string(n.Kind), Text: n.Text, Tool: n.Tool, Payload: n.Payload}
		ok := true
		if !all {
			e, ok = compact(n)
		}
		if ok {
			out.Events = append(out.Events, e)
		}
	}
	return out
}

// wait answers task_events: the events after after, waiting up to wait
// for one to show (or for the task to end) when there is none yet.
func (t *task) wait(ctx context.Context, after int, all bool, wait time.Duration) Events {
	timer := time.NewTimer(min(max(wait, 0), maxWait))
	defer timer.Stop()
	for {
		t.mu.Lock()
		changed, state := t.changed, t.state
		t.mu.Unlock()
		out := t.eventsAfter(after, all)
		out.State, out.Ended = state, state != "" && !out.More
		if len(out.Events) > 0 || state != "" || out.More || wait <= 0 {
			return t.withState(out)
		}
		after = out.Last // nothing shown yet: what was left out stays out
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
