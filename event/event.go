// Package event defines the one stream every front end reads: an Event is
// what happened in a run, normalized from whatever the provider sent (R6.1).
package event

import "fmt"

// Kind names what an Event reports. The set may grow: every consumer keeps a
// default branch.
type Kind string

// The fifteen kinds of R6.1.
const (
	Init       Kind = "init"        // a session is known (payload: session)
	Text       Kind = "text"        // model text
	Thinking   Kind = "thinking"    // model reasoning
	ToolCall   Kind = "tool_call"   // the model asked for a tool
	ToolResult Kind = "tool_result" // a tool answered
	Denied     Kind = "denied"      // a tool outside the allowed list was refused
	Error      Kind = "error"       // an API or runtime error; never part of a result text
	Reset      Kind = "reset"       // a context boundary (resume, handoff)
	Usage      Kind = "usage"       // tokens and cost of one model response
	Result     Kind = "result"      // an agent run ended
	Ask        Kind = "ask"         // a question to the person, or mail from them
	Retry      Kind = "retry"       // waiting before another attempt
	Step       Kind = "step"        // a workflow step began or ended
	Handoff    Kind = "handoff"     // context handoff phases
	Interrupt  Kind = "interrupt"   // a cooperative interrupt took effect
)

// An Ask event's payload["kind"] says what it is; a UI looks at it first:
//
//   - "question": a question to the person, once when asked (state
//     "asked") and once when settled (answered, timeout, declined,
//     over_budget, invalid), keyed by payload id; see human.Ask.Event.
//   - "mail": the person sent a note without being asked (R6.3).
//   - "mail_delivered": that note reached the model at a message boundary
//     (R10.3), the receipt seed 004's terminal shows; text is the note.
//     A UI that draws "mail" and leaves the rest to its answerer, as
//     seed 004's sample does, skips it unchanged.

// Delta is a piece of model text or reasoning as it streams in, before the
// response is complete (issue 11): Text holds the new piece only, and
// payload "thinking" is true for reasoning. Nothing of it is stored: the
// whole response follows as Text and Thinking events once it is durable,
// and a call that fails or is interrupted mid-stream leaves deltas with no
// whole event after them (payload "attempt" numbers the call's attempt, so
// a consumer can drop what a retry repeats). A consumer that wants only
// whole messages ignores this kind.
const Delta Kind = "delta"

// Kinds lists every kind, in the order of R6.1, then Delta.
var Kinds = []Kind{Init, Text, Thinking, ToolCall, ToolResult, Denied, Error,
	Reset, Usage, Result, Ask, Retry, Step, Handoff, Interrupt, Delta}

// Event is one thing that happened. Raw holds the provider's own value for
// in-process consumers and never leaves the process: it is not serialized.
type Event struct {
	Kind    Kind           `json:"kind"`
	Text    string         `json:"text,omitempty"`
	Tool    string         `json:"tool,omitempty"`
	Payload map[string]any `json:"payload,omitempty"`
	Raw     any            `json:"-"`
}

// String renders a tool call as "[Tool] summary", anything else as its
// text, and an event without text as "<kind>".
func (e Event) String() string {
	if e.Kind == ToolCall {
		return fmt.Sprintf("[%s] %s", e.Tool, e.Text)
	}
	if e.Text == "" {
		return "<" + string(e.Kind) + ">"
	}
	return e.Text
}

// Sink receives events. It must not block for long; see R6.9.
type Sink func(Event)
