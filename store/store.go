// Package store defines the durable session store: an append-only log of
// entries per session key, chained by uuid / parent uuid (R2.7). The
// embedded default is store/sqlite; store/storetest is the conformance suite
// every backend must pass.
//
// Keys have the form project_key/session_id[/subpath], where project_key is
// the absolute workspace path with "/", "_" and "." replaced by "-" (see
// ProjectKey). A subagent's transcript lives under a sub-path of its
// parent's key (R2.5).
package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/flower-run/flower/model"
)

// SchemaVersion is the version of the entry format and tables this build
// reads and writes. A store of another version is refused (R5.6).
const SchemaVersion = 3

// Errors a backend returns; callers branch on them with errors.Is.
var (
	ErrSchema    = errors.New("store: incompatible schema version")
	ErrNotStore  = errors.New("store: not a session store")
	ErrDuplicate = errors.New("store: duplicate entry uuid")
)

// Kind says what an Entry records.
type Kind string

// Entry kinds. user and assistant entries carry a Message; the others carry
// an Op or Text.
const (
	KindUser      Kind = "user"        // a prompt or a person's message
	KindAssistant Kind = "assistant"   // a complete model response (durable before its tools run)
	KindOpStarted Kind = "op_started"  // intent of a side-effecting tool call (write-ahead)
	KindResult    Kind = "tool_result" // a tool's result: the op completed (or was denied)
	KindAPIError  Kind = "api_error"   // a synthetic record of a failed model call; pruned from views
	KindInterrupt Kind = "interrupt"   // a cooperative interrupt took effect here
	KindHandoff   Kind = "handoff"     // the session handed off; Text holds the document
	KindNote      Kind = "note"        // a runtime note for the model (resume, skipped op)
	// KindAttempt records, durable before it runs, one more execution of an
	// ambiguous op (its Op is the intent's): re-executions are counted in
	// the store, so R5.7's bound holds across any number of crashes.
	KindAttempt Kind = "op_attempt"
	// KindHook records what a project's PreToolUse hooks decided about a
	// call (package hook), durable before the call runs: Op.ID is the
	// call's, Text the permission decision (allow, ask, deny or ""),
	// Op.Denied a block and Op.Content its reason. A resumed call reuses
	// it, so no hook runs twice for one call (issue 21).
	KindHook Kind = "hook_decision"
)

// Entry is one record of a session. Entries are never rewritten.
type Entry struct {
	Seq     int64          `json:"seq,omitempty"` // assigned by the store on append
	UUID    string         `json:"uuid"`
	Parent  string         `json:"parent,omitempty"`
	Key     string         `json:"key"`
	Kind    Kind           `json:"kind"`
	Time    time.Time      `json:"time"`
	Message *model.Message `json:"message,omitempty"`
	Op      *Op            `json:"op,omitempty"`
	Text    string         `json:"text,omitempty"`
	// Response metadata for assistant entries.
	Model      string       `json:"model,omitempty"`
	StopReason string       `json:"stop_reason,omitempty"`
	Usage      *model.Usage `json:"usage,omitempty"`
	Cost       float64      `json:"cost,omitempty"`
}

// Op is a tool call's intent or outcome.
type Op struct {
	ID      string          `json:"id"` // the tool_use id
	Tool    string          `json:"tool"`
	Input   json.RawMessage `json:"input,omitempty"`
	Class   string          `json:"class,omitempty"`
	Content string          `json:"content,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	Denied  bool            `json:"denied,omitempty"`
	Cut     bool            `json:"cut,omitempty"` // the call was cut by an interrupt before it finished
	// Size is set only by Heads.LoadHeads on a result whose Content it
	// cut to a head: the whole content's length in bytes. It is never
	// stored; zero means Content is whole.
	Size int `json:"size,omitempty"`
}

// Meta describes a session.
type Meta struct {
	Key       string    `json:"key"`
	Agent     string    `json:"agent,omitempty"`
	Model     string    `json:"model,omitempty"`
	Workspace string    `json:"workspace,omitempty"`
	ForkOf    string    `json:"fork_of,omitempty"`
	Created   time.Time `json:"created"`
}

// Store is the durable session store. Append is atomic and durable when it
// returns: all the entries or none, fsync'd.
type Store interface {
	// Append writes entries in order, in one transaction.
	Append(ctx context.Context, entries ...Entry) error
	// Load returns the entries of exactly key, in append order.
	Load(ctx context.Context, key string) ([]Entry, error)
	// Last returns the newest entry of key with that kind, without loading
	// the session (banners and probes of long sessions need only that).
	Last(ctx context.Context, key string, kind Kind) (Entry, bool, error)
	// PutMeta records a session's metadata (the latest put wins).
	PutMeta(ctx context.Context, m Meta) error
	// Meta returns a session's metadata; ok is false if there is none.
	Meta(ctx context.Context, key string) (m Meta, ok bool, err error)
	// Sessions lists the keys under prefix that have metadata, oldest first.
	Sessions(ctx context.Context, prefix string) ([]Meta, error)
	// PutSummary stores a summary (a handoff document, say) for key.
	PutSummary(ctx context.Context, key, text string) error
	// Summary returns the latest summary for key.
	Summary(ctx context.Context, key string) (string, bool, error)
	// Runs: run state, lineage and manifest rows, committed with entries.
	Runs
	Close() error
}

// ProjectKey turns an absolute workspace path into the key prefix of its
// sessions.
func ProjectKey(workspace string) string {
	return strings.NewReplacer("/", "-", "_", "-", ".", "-").Replace(workspace)
}

// SessionKey is the store key of a session of a workspace.
func SessionKey(workspace, sessionID string) string {
	return ProjectKey(workspace) + "/" + sessionID
}
