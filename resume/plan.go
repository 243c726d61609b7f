// Package resume is the pure planner of a stored session (DESIGN.md §3.4):
// from the entries of a session alone it says where the session stands and
// what the loop must do before it may call the model again. It reads no
// store, runs no tool and keeps no state, so it is tested as a table of
// entry histories -> plans, before any process is killed.
//
// Every entry kind of package store is understood here; an entry of a kind
// this build does not know is a hard error (ErrUnknownKind), never a silent
// "done": a newer flower's history must not be mistaken for a finished one.
package resume

import (
	"errors"
	"fmt"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// MaxRuns bounds the executions of one ambiguous op under Retry: the run
// the crash cut and one retry (R5.7). The intent (op_started) counts the
// first, each op_attempt one more; an op whose runs all ended without a
// result (it killed flower, say) is never run again.
const MaxRuns = 2

// Plan is where a stored session stands.
type Plan struct {
	// Last is the last model response, if any.
	Last *store.Entry
	// Pending are the calls of Last without a result, in the order the
	// model made them. They are answered (run, retried or skipped) before
	// the model is called again: a completed response is never requested
	// twice (R5.3).
	Pending []Call
	// Ended is true when Last ended its turn and nothing the model has not
	// seen came after it: without a new prompt there is nothing to do.
	Ended bool
	// Handoff is set when the session's last entry is a handoff: the work
	// continues in the successor it names (R4.7), never in this session.
	Handoff *Handoff
	// Interrupted is true when an interrupt took effect after Last.
	Interrupted bool
	// Note is the person's message of an interrupt whose note was never
	// stored (a process of an older build died between the two writes): it
	// goes to the model before the next call, as the interrupt promised.
	Note string
	// APIErrors are the failed model calls recorded since Last.
	APIErrors []string
}

// Call is a pending call of the last response.
type Call struct {
	Use *model.ToolUse
	// Runs counts the executions that began without a durable result: one
	// for the intent, one per op_attempt. Zero means the call never started
	// (a pure call, or a response cut before its tools ran): safe to run.
	Runs int
	// Idempotent is set by the loop, not by the plan: the call's tool says
	// a repeat has no further effect (tool.Idempotent), so Decide runs it
	// again where a policy would skip it.
	Idempotent bool
}

// Ambiguous reports whether the call may have taken effect: its intent is
// durable but its result is not (R5.4).
func (c Call) Ambiguous() bool { return c.Runs > 0 }

// Handoff is a session that ended by handing its work to a successor.
type Handoff struct {
	// Successor is the id of the session that takes over: by construction
	// the uuid of the handoff entry, chosen before the successor starts, so
	// a process killed in between finds or creates the same one.
	Successor string
	// Document is the handoff document the successor starts from.
	Document string
}

// Errors of Session; they arrive wrapped in an *EntryError.
var (
	ErrUnknownKind = errors.New("unknown entry kind")
	ErrMalformed   = errors.New("malformed entry")
)

// EntryError names the entry a session cannot be planned past.
type EntryError struct {
	Index int // position in the session
	UUID  string
	Kind  store.Kind
	Err   error // ErrUnknownKind or ErrMalformed
}

func (e *EntryError) Error() string {
	return fmt.Sprintf("resume: entry %d (uuid %q, kind %q): %v", e.Index, e.UUID, e.Kind, e.Err)
}

func (e *EntryError) Unwrap() error { return e.Err }

// Session plans the resumption of a session from its entries.
func Session(entries []store.Entry) (Plan, error) {
	w := walker{runs: map[string]int{}, done: map[string]bool{}}
	for i := range entries {
		if err := w.see(&entries[i]); err != nil {
			e := &entries[i]
			return Plan{}, &EntryError{Index: i, UUID: e.UUID, Kind: e.Kind, Err: err}
		}
	}
	return w.plan(), nil
}

// walker folds entries into what the plan needs; only what follows the
// last model response matters for the calls in flight.
type walker struct {
	last        *store.Entry
	runs        map[string]int  // op id -> executions begun since last
	done        map[string]bool // op id -> result stored since last
	input       bool            // a message the model has not answered
	interrupted bool
	note        string       // text of an interrupt whose note is not stored (yet)
	apiErrors   []string     // failed calls since last
	handoff     *store.Entry // set while the handoff is the latest entry
}

func (w *walker) see(e *store.Entry) error {
	w.handoff, w.note = nil, "" // only the latest entry can be a handoff or an unanswered interrupt
	switch e.Kind {
	case store.KindAssistant:
		if e.Message == nil {
			return fmt.Errorf("%w: a response without a message", ErrMalformed)
		}
		*w = walker{last: e, runs: map[string]int{}, done: map[string]bool{}}
	case store.KindUser:
		if e.Message == nil {
			return fmt.Errorf("%w: a user entry without a message", ErrMalformed)
		}
		w.input = true
	case store.KindNote:
		w.input = true
	case store.KindOpStarted, store.KindAttempt:
		if e.Op == nil {
			return fmt.Errorf("%w: %s without an op", ErrMalformed, e.Kind)
		}
		w.runs[e.Op.ID]++
	case store.KindResult:
		if e.Op == nil {
			return fmt.Errorf("%w: a result without an op", ErrMalformed)
		}
		w.done[e.Op.ID] = true
	case store.KindAPIError:
		w.apiErrors = append(w.apiErrors, e.Text)
	case store.KindInterrupt:
		w.interrupted, w.note = true, e.Text
	case store.KindHandoff:
		w.handoff = e
	case store.KindHook: // the session reads it (a call's hook decision); no effect on the plan
		if e.Op == nil {
			return fmt.Errorf("%w: a hook decision without an op", ErrMalformed)
		}
	default:
		return ErrUnknownKind
	}
	return nil
}

func (w *walker) plan() Plan {
	p := Plan{Last: w.last, Interrupted: w.interrupted, Note: w.note, APIErrors: w.apiErrors}
	if w.handoff != nil {
		p.Handoff = &Handoff{Successor: w.handoff.UUID, Document: w.handoff.Text}
		return p
	}
	if w.last == nil {
		return p
	}
	uses := w.last.Message.ToolUses()
	for _, u := range uses {
		if !w.done[u.ID] {
			p.Pending = append(p.Pending, Call{Use: u, Runs: w.runs[u.ID]})
		}
	}
	p.Ended = len(uses) == 0 && !w.input && p.Note == ""
	return p
}
