package config

import (
	"fmt"
	"regexp"
	"strings"
)

// Command is one of Claude Code's custom slash commands (issue 21 item
// 3): .claude/commands/NAME.md (or ~/.claude/commands/NAME.md), used as
// "/NAME args". Its body is the prompt, with $ARGUMENTS replaced by all
// the arguments and $1, $2... by each.
type Command struct {
	Name, Description, ArgumentHint string
	// AllowedTools is the front matter's allowed-tools, as written; flower
	// lists it and does not change its rules for it.
	AllowedTools []string
	Body, Path   string
}

// LoadCommands reads the slash commands of workspace: the user's, then
// the project's, a project's name replacing a user's.
func LoadCommands(workspace string) ([]Command, error) {
	byName := map[string]int{}
	var out []Command
	for _, dir := range defDirs(workspace, "commands") {
		defs, err := readDefs(dir)
		if err != nil {
			return nil, err
		}
		for _, d := range defs {
			c := Command{Name: d.Name, Description: d.str("description"), ArgumentHint: d.str("argument-hint"),
				AllowedTools: d.list("allowed-tools"), Body: d.Body, Path: d.Path}
			if i, ok := byName[c.Name]; ok {
				out[i] = c
				continue
			}
			byName[c.Name] = len(out)
			out = append(out, c)
		}
	}
	return out, nil
}

var positional = regexp.MustCompile(`\$([1-9])`)

// Expand is the command's prompt for args.
func (c Command) Expand(args string) string {
	args = strings.TrimSpace(args)
	fields := strings.Fields(args)
	body := strings.ReplaceAll(c.Body, "$ARGUMENTS", args)
	body = positional.ReplaceAllStringFunc(body, func(m string) string {
		i := int(m[1] - '1')
		if i < len(fields) {
			return fields[i]
		}
		return ""
	})
	if args != "" && !strings.Contains(c.Body, "$ARGUMENTS") && !positional.MatchString(c.Body) {
		body += "\n\nArguments: " + args // a command that takes none still sees what was typed
	}
	return body
}

// ExpandSlash turns a prompt "/name args" naming a slash command of
// workspace into that command's prompt; ok is false (and prompt is kept)
// for any other prompt. An unknown /name is an error listing the names,
// unless it looks like a path (/tmp/x), which is a prompt.
func ExpandSlash(workspace, prompt string) (out string, ok bool, err error) {
	name, args, _ := strings.Cut(strings.TrimSpace(prompt), " ")
	name, isSlash := strings.CutPrefix(name, "/")
	if !isSlash || name == "" || strings.Contains(name, "/") {
		return prompt, false, nil
	}
	cmds, err := LoadCommands(workspace)
	if err != nil {
		return prompt, false, err
	}
	var names []string
	for _, c := range cmds {
		if c.Name == name {
			return c.Expand(args), true, nil
		}
		names = append(names, "/"+c.Name)
	}
	if len(cmds) == 0 {
		return prompt, false, nil
	}
	return prompt, false, fmt.Errorf("no slash command /%s in .claude/commands (have %s)", name, strings.Join(names, ", "))
}
