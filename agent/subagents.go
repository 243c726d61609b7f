package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/tool"
)

// Subagent is a named child agent the Task tool can run (issue 21: Claude
// Code's .claude/agents/*.md): the model picks it by subagent_type.
type Subagent struct {
	Name, Description string
	// Tools are the only tools it may use (within the caller's); nil
	// inherits the caller's.
	Tools []string
	// Model is its model; "" or "inherit" is the caller's, and a name the
	// model table does not know (Claude Code's sonnet, opus, haiku) is
	// the caller's too.
	Model string
	// Prompt is its system prompt, after the subagent frame.
	Prompt string
}

// taskSchema is the Task tool's schema, with subagent_type when there
// are named subagents.
func (t *taskTool) schema() json.RawMessage {
	if len(t.rt.subagents) == 0 {
		return tool.TaskSchema
	}
	var s map[string]any
	_ = json.Unmarshal(tool.TaskSchema, &s)
	props := s["properties"].(map[string]any)
	names := make([]string, len(t.rt.subagents))
	for i, a := range t.rt.subagents {
		names[i] = a.Name
	}
	props["subagent_type"] = map[string]any{"type": "string", "enum": names,
		"description": "The named subagent to run (see the list in this tool's description); leave it out for a general one."}
	b, _ := json.Marshal(s)
	return b
}

func (t *taskTool) description() string {
	if len(t.rt.subagents) == 0 {
		return tool.TaskDescription
	}
	var b strings.Builder
	b.WriteString(tool.TaskDescription)
	b.WriteString("\n\nNamed subagents (set subagent_type to use one):")
	for _, a := range t.rt.subagents {
		fmt.Fprintf(&b, "\n- %s: %s", a.Name, a.Description)
	}
	return b.String()
}

// named shapes spec for the subagent called name: its prompt, its tools
// (only those the caller has too) and its model. The error is for the
// model, listing the names it may use.
func (t *taskTool) named(spec *Spec, name string) error {
	i := slices.IndexFunc(t.rt.subagents, func(a Subagent) bool { return a.Name == name })
	if i < 0 {
		names := make([]string, len(t.rt.subagents))
		for j, a := range t.rt.subagents {
			names[j] = a.Name
		}
		return fmt.Errorf("no subagent named %q: use one of %v, or leave subagent_type out", name, names)
	}
	a := t.rt.subagents[i]
	spec.Name += "/" + a.Name
	if a.Prompt != "" {
		spec.Instructions += "\n\n" + a.Prompt
	}
	if a.Tools != nil {
		var tools []string
		for _, n := range a.Tools {
			if slices.Contains(spec.Tools, n) {
				tools = append(tools, n)
			}
		}
		spec.Tools = append([]string{}, tools...) // non-nil: none at all when none is left
	}
	if a.Model != "" && a.Model != "inherit" {
		if _, ok := model.Lookup(a.Model); ok {
			spec.Model = a.Model
		}
	}
	return nil
}
