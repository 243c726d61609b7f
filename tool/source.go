package tool

import "context"

// Source offers tools known only once something has started (the tools of
// MCP servers, package mcp) and that may change while a run lasts. The
// runtime asks it again before every model call, so a Source caches: Tools
// must be cheap after the first call.
type Source interface {
	Tools(ctx context.Context) []Tool
}

// Idempotent is an Effect tool whose calls may be repeated with the same
// input without further effect (an MCP tool with idempotentHint, say): a
// call a crash cut is run again even where the resume policy would skip
// it, since a repeat changes nothing (package resume).
type Idempotent interface {
	Tool
	Idempotent() bool
}

// IsIdempotent reports whether t declares its calls idempotent.
func IsIdempotent(t Tool) bool {
	i, ok := t.(Idempotent)
	return ok && i.Idempotent()
}
