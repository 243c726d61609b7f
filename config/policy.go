package config

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
)

// Policy says what resume does with an ambiguous op: a side-effecting op
// whose op_started is durable but whose op_completed is not, so nobody
// knows whether its effect happened (SPEC R5.4).
type Policy string

// The policies flower.yaml accepts. The zero Policy means "not set here"
// and falls through to the next, less specific setting.
const (
	// Retry runs the op again: at most twice overall (R5.7). The default,
	// because most ops are idempotent or cheap to repeat.
	Retry Policy = "retry"
	// Skip completes the op with an empty result and a note, so the model
	// carries on as if it ran; nothing is repeated.
	Skip Policy = "skip"
	// Discard abandons the whole run: for effects that must never happen
	// twice and cannot be assumed to have happened (publishing, payments).
	Discard Policy = "discard"
	// Prompt is accepted for files written for older runtimes. Resume is
	// automatic and must never block on a human, so it behaves as Retry.
	Prompt Policy = "prompt"
)

// policyChoices is the fix shown whenever a policy value is wrong.
const policyChoices = "use retry, skip, discard or prompt"

// Effective is the policy resume actually applies: Prompt is legacy and
// means Retry, and an unset policy means the default, Retry.
func (p Policy) Effective() Policy {
	if p == Prompt || p == "" {
		return Retry
	}
	return p
}

// Valid reports whether p is one of the four named policies.
func (p Policy) Valid() bool {
	switch p {
	case Retry, Skip, Discard, Prompt:
		return true
	}
	return false
}

// UnmarshalYAML validates the policy while the decoder still holds its
// node, so a bad value is reported at its own line and column instead of
// being found later with no position. (go-yaml never calls it for an
// explicit null; checkShape catches those first.)
func (p *Policy) UnmarshalYAML(node ast.Node) error {
	s, ok := node.(*ast.StringNode)
	if !ok {
		return &valueError{node: node, msg: fmt.Sprintf("got %s, want a policy (%s)", kindOf(node), policyChoices)}
	}
	got := Policy(s.Value)
	if !got.Valid() {
		return &valueError{node: node, msg: fmt.Sprintf("unknown policy %q (%s)", s.Value, policyChoices)}
	}
	*p = got
	return nil
}

// kindOf names a node's YAML kind for messages ("a mapping", "an int").
func kindOf(node ast.Node) string {
	if node == nil {
		return "nothing"
	}
	name := node.Type().YAMLName()
	switch name {
	case "":
		return "an unknown value"
	case "scalar":
		return "a block scalar" // | or >, which keeps a trailing newline
	case "int", "inf", "alias", "anchor":
		return "an " + name
	}
	return "a " + name
}
