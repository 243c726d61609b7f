package config

import "fmt"

// Subagent is one of Claude Code's subagents (issue 21 item 3): a file
// .claude/agents/NAME.md (or ~/.claude/agents/NAME.md) whose front matter
// gives name, description, tools and model, and whose body is its system
// prompt. The Task tool runs one when its subagent_type names it.
type Subagent struct {
	Name, Description string
	// Tools are the only tools it may use; nil inherits the caller's.
	Tools []string
	// Model is its model: "" or "inherit" is the caller's.
	Model  string
	Prompt string
	Path   string
}

// LoadSubagents reads the subagents of workspace: the user's, then the
// project's, a project's name replacing a user's. A file without a
// description is an error, as Claude Code needs one to choose it.
func LoadSubagents(workspace string) ([]Subagent, error) {
	byName := map[string]int{}
	var out []Subagent
	for _, dir := range defDirs(workspace, "agents") {
		defs, err := readDefs(dir)
		if err != nil {
			return nil, err
		}
		for _, d := range defs {
			a := Subagent{Name: d.str("name"), Description: d.str("description"), Tools: d.list("tools"),
				Model: d.str("model"), Prompt: d.Body, Path: d.Path}
			if a.Name == "" {
				a.Name = d.Name
			}
			if a.Description == "" {
				return nil, &Error{File: d.Path, Line: 1, Column: 1, Field: "description",
					Msg: fmt.Sprintf("subagent %q has no description (add description: when to use it)", a.Name)}
			}
			if i, ok := byName[a.Name]; ok {
				out[i] = a
				continue
			}
			byName[a.Name] = len(out)
			out = append(out, a)
		}
	}
	return out, nil
}
