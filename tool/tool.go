// Package tool defines what an agent can do in the world: the Tool
// interface, op classes that decide what happens to a call on resume
// (R5.2), a registry, output capping and secret redaction. It is what the
// author of a custom tool imports; the built-in tools of R2.4 live in
// tool/builtin.
package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
)

// Class says how a tool call behaves on resume (R5.2).
type Class int

const (
	// Pure calls only read the workspace: safe to run again.
	Pure Class = iota
	// World calls read the outside world: re-executed on resume, never
	// replayed, so a flaky answer is not pinned.
	World
	// Effect calls change something: memoized, intent durable before they run.
	Effect
)

func (c Class) String() string {
	switch c {
	case Pure:
		return "pure"
	case World:
		return "world"
	default:
		return "effect"
	}
}

// Result is what the model sees of a call. A failure the model should know
// about (bad input, missing file, non-zero exit) is a Result with IsError,
// never a Go error.
type Result struct {
	Content string
	IsError bool
}

// Errorf builds an IsError result.
func Errorf(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// Tool is one capability offered to the model. Run returns a Go error only
// when the runtime itself failed (the context was cancelled, say).
type Tool interface {
	Name() string
	Description() string
	Schema() json.RawMessage // JSON Schema of the input object
	Class() Class
	Run(ctx context.Context, input json.RawMessage) (Result, error)
}

// Keeper is a tool whose result is made durable as soon as it exists,
// though its calls have no intent: running it again after a crash costs
// more than a commit (a person's answer, say). The results of other pure
// and world calls ride along with the session's next commit (package agent).
type Keeper interface {
	Tool
	KeepResult() bool
}

// Keeps reports whether t's results are made durable at once.
func Keeps(t Tool) bool {
	k, ok := t.(Keeper)
	return ok && k.KeepResult()
}

// Registry is a set of tools by name.
type Registry map[string]Tool

// NewRegistry indexes tools by name; a later tool replaces an earlier one of
// the same name.
func NewRegistry(tools ...Tool) Registry {
	r := Registry{}
	for _, t := range tools {
		r[t.Name()] = t
	}
	return r
}

// Names lists the registered names, sorted.
func (r Registry) Names() []string {
	out := make([]string, 0, len(r))
	for n := range r {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
