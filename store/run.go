package store

import (
	"context"
	"time"
)

// Run state lives in the store beside the sessions it describes, so that a
// workflow transition commits in the same transaction as the entries behind
// it (DESIGN.md §3.7): "run created + task text" is one commit, "step bound
// to a session + its first message" is another. The JSON files of a run dir
// (lineage.json, manifest.json) are exports of these records.

// RunStatus is where a run stands.
type RunStatus string

// Run statuses. Only an in-flight run is finished by a later wake.
const (
	RunInFlight  RunStatus = "in_flight"
	RunFinished  RunStatus = "finished"
	RunDiscarded RunStatus = "discarded"
)

// Run is one execution of a workflow in a workspace. It is replaced whole
// at every transition.
type Run struct {
	ID        string    `json:"id"`
	Workspace string    `json:"workspace"`
	Status    RunStatus `json:"status"`
	// Outcome says how a finished run ended: "passed", "failed", ...
	Outcome string `json:"outcome,omitempty"`
	// Task is the person's words that started the run; Phrase the words
	// added on the wake that started it, to a thread that already had a task.
	Task   string `json:"task,omitempty"`
	Phrase string `json:"phrase,omitempty"`
	// Said are the words typed on wakes that finished this run while its
	// clarification was unfinished: durable before the wake does anything
	// else, so a crash before the clarification receives them keeps them.
	Said string `json:"said,omitempty"`
	// After names the run a wake had to finish before this one, which it
	// queued with the phrase typed on it: this run starts only once After
	// is no longer in flight (resume.PlanRuns), and the phrase is durable
	// from the moment the wake accepted it.
	After string `json:"after,omitempty"`
	// Step is the step in flight ("" between steps) and Row its manifest
	// row (work#round2, say).
	Step string `json:"step,omitempty"`
	Row  string `json:"row,omitempty"`
	// From, Fork and Prompt are how the step in flight starts: continue
	// (or fork) session From, or a new one, with Prompt. They are durable
	// before the step's first request, so a crash before the prompt
	// reaches the step's session starts the step again the same way.
	From   string `json:"from,omitempty"`
	Fork   bool   `json:"fork,omitempty"`
	Prompt string `json:"prompt,omitempty"`
	// Session is the session of the step in flight once its prompt is
	// durable in it: a crash from then on continues that session.
	Session string `json:"session,omitempty"`
	// Judge is the session of the judge round in flight; Round counts the
	// judge rounds started.
	Judge string `json:"judge,omitempty"`
	Round int    `json:"round,omitempty"`
	// Verdict is the last judge round's verdict, "pass" or "fail", from
	// the commit of its row until the workflow acts on it (ends the run,
	// or starts the rework round); Findings is its text. A crash in
	// between acts on the stored verdict instead of judging again.
	Verdict  string `json:"verdict,omitempty"`
	Findings string `json:"findings,omitempty"`
	// Done lists the steps completed in this run, in order.
	Done []string `json:"done,omitempty"`
	// Holder names the process that drives the run now (host pid), for
	// people; the lease itself is the backend's (a file lock, an advisory
	// lock).
	Holder  string    `json:"holder,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`

	// AskTimeout is how long, in seconds, a question of a run queued for
	// the workers waits for an answer (flower submit --ask-timeout; 0:
	// unattended); nil: the worker's own --ask-timeout.
	AskTimeout *float64 `json:"ask_timeout_s,omitempty"`
}

// IsDone reports whether step is among the run's completed steps.
func (r *Run) IsDone(step string) bool {
	for _, s := range r.Done {
		if s == step {
			return true
		}
	}
	return false
}

// Binding says that a step of a workspace's thread continues in a session
// (a lineage row, R3.2). Bindings are appended; the newest per step is
// current and the earlier ones of the thread are its retired sessions.
type Binding struct {
	Workspace string `json:"workspace"`
	Step      string `json:"step"`
	Session   string `json:"session"`
}

// Lineage is the current thread of a workspace: which session each step
// continues, the sessions each step left behind (handoffs, dead sessions),
// and how many wakes the thread has had.
type Lineage struct {
	Workspace string              `json:"workspace"`
	Thread    int                 `json:"thread"` // 0 until the first archive (/new)
	Woke      int                 `json:"woke"`
	Steps     map[string]string   `json:"steps"`
	Retired   map[string][]string `json:"retired,omitempty"`
}

// StepResult is one manifest row: a step attempt of a run, with the field
// names of the seed's StepResult plus duration_s and run (R3.4). Every
// field is present on every row, success or not.
type StepResult struct {
	Run       string    `json:"run"`
	Step      string    `json:"step"`
	SessionID string    `json:"session_id"`
	OK        bool      `json:"ok"`
	CostUSD   float64   `json:"cost_usd"`
	NumTurns  int       `json:"num_turns"`
	Text      string    `json:"text"`
	Error     string    `json:"error"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	Attempts  int       `json:"attempts"`
	Errors    []string  `json:"errors"`
	Resumed   bool      `json:"resumed"`
	Retired   []string  `json:"retired"`
	Context   int       `json:"context"`
	DurationS float64   `json:"duration_s"`
}

// Batch is one transaction: entries and the workflow records behind them,
// all durable together or not at all. The parts are applied in this order:
// Archive, Wake, Bind, Run, Results, Meta, Entries.
type Batch struct {
	// Archive starts a new thread in this workspace: its lineage is empty
	// and its wake count zero (R3.13). Runs and sessions stay.
	Archive string
	// Wake counts one wake of this workspace's thread.
	Wake    string
	Bind    []Binding
	Run     *Run // inserted, or replacing the run of the same ID
	Results []StepResult
	// Meta are put as by PutMeta: a new session's metadata commits with
	// its first entries, so no crash leaves one without the other.
	Meta []Meta
	// Entries are appended as by Append.
	Entries []Entry
}

// Empty reports whether the batch writes nothing.
func (b Batch) Empty() bool {
	return b.Archive == "" && b.Wake == "" && len(b.Bind) == 0 && b.Run == nil &&
		len(b.Results) == 0 && len(b.Meta) == 0 && len(b.Entries) == 0
}

// Runs is the run-state half of a Store.
type Runs interface {
	// Commit writes a batch in one transaction: all of it or none, durable
	// when it returns. A result replaces an earlier one of the same run
	// and step; entries follow Append's rules.
	Commit(ctx context.Context, b Batch) error
	// Run returns the run of that id; ok is false if there is none.
	Run(ctx context.Context, id string) (r Run, ok bool, err error)
	// Runs lists the runs of a workspace ("" for all), oldest first.
	Runs(ctx context.Context, workspace string) ([]Run, error)
	// Lineage returns the current thread of a workspace; a workspace
	// without one has an empty lineage.
	Lineage(ctx context.Context, workspace string) (Lineage, error)
	// Results returns the step results of a run ("" for all runs), in the
	// order their rows were first written.
	Results(ctx context.Context, run string) ([]StepResult, error)
}
