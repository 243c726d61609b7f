// Package agent is the loop that runs one agent durably: it loads the
// session view, calls the model, makes the response durable, runs the tools
// it asked for (intent durable before any effect), appends their results and
// goes on until the model ends its turn (R2.1–R2.3). Everything that must
// survive a crash goes through the store before the loop moves on.
//
// Group commit. The results of a turn's calls without an intent (pure and
// world calls: intents are written for effects only) are not committed one
// by one: they ride along with the next commit of the session, which is the
// next effect's result, an op_attempt, or, when no effect follows, the
// commit of the next model response together with it (issue 12). The crash
// semantics stay identical: a crash before that commit leaves such a call
// with neither an intent nor a result, which resume.Session plans as
// pending and never ambiguous (Runs == 0), so the wake simply runs it
// again, as it would have after a crash just before the call's own commit.
// The model may be asked over results not yet durable, but its response
// commits in one transaction with them: no durable response was ever made
// from results the store lacks, and a lost request is asked again, as after
// any crash during a model call. An effect's result is still durable before
// the next call runs, so a completed effect is never run again; results keep
// the order of their calls, except a world call's (WebFetch): it commits
// only with what goes past the tool turn (the next response, at the
// latest), never with a later effect's result, so a crash before the
// model saw it runs the call again on resume rather than replay it (R5.2). A cut (interrupted) call without an intent is
// held like any other and the interrupt's own commit carries it. A tool that
// keeps its results (tool.Keeper: ask, whose answer is a person's time) is
// committed at once, with what is held before it. The loop flushes what is
// held when it stops (a limit, an error). So a tool turn costs one commit
// for the response and its intents plus one per effect: pure-only turns one.
//
// Overlap. A run's prompt (with a new session's metadata and what the
// workflow binds to it) is committed while the first model request is sent
// and answered (appendAhead); the next commit of the session, the
// response's at the latest, waits for it first, and a failed prompt commit
// fails the run before anything else commits. A crash thus leaves what a
// synchronous prompt commit leaves: nothing of the run, or the prompt
// durable, or the prompt and the response; never a response without its
// prompt. The only new state is "a request was sent while the prompt was
// not yet durable", and a model call is not an effect: the loop already
// asks the model over results not yet durable (above), and a crash during
// a call repeats it. The window in which a crash loses the prompt is still
// its fsync. Responses are not overlapped so: the next request waits for
// the previous response's commit, and an effect still waits for its
// intent (R5.1). TestPromptCommitOverlapsFirstRequest and
// TestLostPromptLosesTheRun check the order; the crash sweep (cmd/flower
// sweep_test.go) kills after the prompt's commit as after any other.
package agent

import (
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/store"
)

// Spec describes an agent (R2.1).
type Spec struct {
	Name         string
	Instructions string   // the system prompt
	Tools        []string // allowed tool names; nil allows every registered tool
	MaxTurns     int      // model responses per Run; 0 means 100
	MaxBudget    float64  // USD per Run; 0 means no limit
	Model        string
}

// RunOptions are the per-call options of Run (R2.2).
type RunOptions struct {
	Resume string     // continue this session id
	Fork   bool       // with Resume: branch into a new session, the original untouched
	Sink   event.Sink // receives the run's events; may be nil
	// With returns the records a workflow commits in the same transaction
	// as the prompt this Run appends to session (and as the first message
	// of a handoff successor): "step bound to session + its first message"
	// is one commit (DESIGN.md §3.7). Entries in the batch are ignored.
	With func(session string) store.Batch
	// subPath places the session under a parent's key (subagents, R2.5).
	subPath string
	// subagent marks every event of this run as a subagent's (R6.2).
	subagent string
	// step is the top-level agent's name, which picks the resume policies
	// of a subagent's calls (R5.4); "" means Spec.Name.
	step string
}

// Stop says why a Run ended. Workflows decide on it, never on error text.
type Stop string

// Stop reasons.
const (
	StopEnded       Stop = "ended"       // the model ended its turn
	StopMaxTurns    Stop = "max_turns"   // Spec.MaxTurns responses were made
	StopBudget      Stop = "budget"      // Spec.MaxBudget was spent
	StopInterrupted Stop = "interrupted" // Interrupt without a message
	StopCancelled   Stop = "cancelled"   // ctx ended: a second Ctrl-C, a signal, a deadline (Err says which)
	StopDiscarded   Stop = "discarded"   // the discard policy abandoned the run
	StopFailed      Stop = "failed"      // anything else: the model, the store, a fatal API error
)

// Result is what Run returns (R2.2).
type Result struct {
	SessionID string    `json:"session_id"`
	OK        bool      `json:"ok"`
	Stop      Stop      `json:"stop"`
	Err       error     `json:"-"` // the cause when Stop is not StopEnded
	Cost      float64   `json:"cost"`
	Turns     int       `json:"turns"`
	Text      string    `json:"text"`
	Error     string    `json:"error,omitempty"`
	Attempts  int       `json:"attempts"`
	Errors    []string  `json:"errors,omitempty"`
	Resumed   bool      `json:"resumed"` // continued a stored session, or retried a failed call in this one (seed 000)
	Retired   []string  `json:"retired,omitempty"`
	Context   int       `json:"context"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
}
