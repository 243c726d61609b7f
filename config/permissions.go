package config

import (
	"github.com/goccy/go-yaml/ast"

	"github.com/flower-run/flower/permission"
)

// Permissions is flower.yaml's permissions key (R9.3), in Claude Code's
// rule syntax (package permission):
//
//	permissions:
//	  ask:  ["Bash(git push:*)"]
//	  deny: ["Write(.github/**)", "WebFetch(domain:*)"]
type Permissions struct {
	Allow []PermissionRule `yaml:"allow"`
	Ask   []PermissionRule `yaml:"ask"`
	Deny  []PermissionRule `yaml:"deny"`
}

// PermissionRule is one rule, parsed where the decoder holds its node so
// that a bad rule is reported at its own line and column.
type PermissionRule string

func (r *PermissionRule) UnmarshalYAML(node ast.Node) error {
	s, ok := node.(*ast.StringNode)
	if !ok {
		return &valueError{node: node, msg: "got " + kindOf(node) + `, want a rule such as "Bash(git push:*)"`}
	}
	if _, err := permission.Parse(s.Value); err != nil {
		return &valueError{node: node, msg: "rule " + quote(s.Value) + ": " + err.Error()}
	}
	*r = PermissionRule(s.Value)
	return nil
}

func quote(s string) string { return `"` + s + `"` }

// PermissionRules are the rules as the runtime takes them, bound to the
// workspace: flower.yaml's and the Claude Code settings files' in one set,
// where a deny rule wins wherever it comes from. Every rule was checked
// while decoding, so the error is only a guard.
func (c Config) PermissionRules(workspace string) (*permission.Rules, error) {
	p, cl := c.Permissions, c.Claude
	return permission.New(workspace, append(strs(p.Allow), cl.Allow...),
		append(strs(p.Ask), cl.Ask...), append(strs(p.Deny), cl.Deny...))
}

// RuleOrigin names the file a permission rule came from, for the message
// of a call it denied or asked about.
func (c Config) RuleOrigin(rule string) string {
	if f, ok := c.Claude.Origin[rule]; ok {
		return f
	}
	return FileName
}

func strs(rs []PermissionRule) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}
