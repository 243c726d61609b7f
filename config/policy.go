package config

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"

	"github.com/flower-run/flower/resume"
)

// Policy is a resume policy as flower.yaml spells it (SPEC R5.4); its
// meaning lives in package resume (resume.Policy), and Config.Policies
// hands the runtime those plain values. This type exists to carry the YAML
// decoder, which package resume must not link.
type Policy string

// The policies flower.yaml accepts, the values of package resume. The zero
// Policy means "not set here" and falls through to the next, less specific
// setting.
const (
	Retry   = Policy(resume.Retry)   // run the op again, at most twice overall (R5.7)
	Skip    = Policy(resume.Skip)    // complete it with a note; nothing is repeated
	Discard = Policy(resume.Discard) // abandon the run: for effects that must never happen twice
	Prompt  = Policy(resume.Prompt)  // legacy: resume never blocks on a human, so Retry
)

// policyChoices is the fix shown whenever a policy value is wrong.
const policyChoices = "use retry, skip, discard or prompt"

// Effective is the policy resume actually applies: Prompt is legacy and
// means Retry, and an unset policy means the default, Retry.
func (p Policy) Effective() Policy { return Policy(resume.Policy(p).Effective()) }

// Valid reports whether p is one of the four named policies.
func (p Policy) Valid() bool { return resume.Policy(p).Valid() }

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
