package config

import (
	"slices"
	"strings"
	"testing"
)

// TestSubagents: the project's .claude/agents override the user's by
// name; tools are a comma list or a YAML list; no description is an error
// naming the file.
func TestSubagents(t *testing.T) {
	ws, _ := claudeWorkspace(t, map[string]string{
		"~/.claude/agents/rev.md":  "---\nname: rev\ndescription: user's\n---\nUSER\n",
		"~/.claude/agents/solo.md": "---\ndescription: only mine\ntools: [Read]\n---\nSOLO\n",
		".claude/agents/review.md": "---\nname: rev\ndescription: project's\ntools: Read, Grep , Glob\nmodel: sonnet\n---\n\nPROJECT\n",
	})
	got, err := LoadSubagents(ws)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "rev" || got[0].Prompt != "PROJECT" || got[0].Description != "project's" ||
		!slices.Equal(got[0].Tools, []string{"Read", "Grep", "Glob"}) || got[0].Model != "sonnet" {
		t.Fatalf("subagents %+v", got)
	}
	if got[1].Name != "solo" || !slices.Equal(got[1].Tools, []string{"Read"}) {
		t.Errorf("the name from the file name, tools from a YAML list: %+v", got[1])
	}
	ws, _ = claudeWorkspace(t, map[string]string{".claude/agents/x.md": "---\nname: x\n---\nbody\n"})
	if _, err := LoadSubagents(ws); err == nil || !strings.Contains(err.Error(), "x.md:1:1: description: subagent \"x\" has no description") {
		t.Errorf("no description: %v", err)
	}
	ws, _ = claudeWorkspace(t, map[string]string{".claude/agents/y.md": "---\nname: y\nbody without end\n"})
	if _, err := LoadSubagents(ws); err == nil || !strings.Contains(err.Error(), "never closed") {
		t.Errorf("unclosed front matter: %v", err)
	}
}

// TestSlashCommands: $ARGUMENTS and $1... are filled in; an unknown
// /name is an error listing the commands; a path is a prompt.
func TestSlashCommands(t *testing.T) {
	ws, _ := claudeWorkspace(t, map[string]string{
		".claude/commands/fix.md":   "---\ndescription: Fix an issue\nargument-hint: NUMBER\nallowed-tools: Bash(git:*), Edit\n---\nFix issue #$1 ($ARGUMENTS); then $2.\n",
		".claude/commands/plain.md": "Run the tests.\n",
	})
	cmds, err := LoadCommands(ws)
	if err != nil || len(cmds) != 2 || cmds[0].ArgumentHint != "NUMBER" || !slices.Equal(cmds[0].AllowedTools, []string{"Bash(git:*)", "Edit"}) {
		t.Fatalf("commands %+v, %v", cmds, err)
	}
	for _, c := range []struct{ in, want string }{
		{"/fix 42 urgent", "Fix issue #42 (42 urgent); then urgent."},
		{"/fix", "Fix issue # (); then ."},
		{"/plain", "Run the tests."},
		{"/plain fast", "Run the tests.\n\nArguments: fast"},
		{"/tmp/x is full", "/tmp/x is full"},
		{"fix it", "fix it"},
	} {
		if got, _, err := ExpandSlash(ws, c.in); err != nil || got != c.want {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, _, err := ExpandSlash(ws, "/nope x"); err == nil || !strings.Contains(err.Error(), "no slash command /nope in .claude/commands (have /fix, /plain)") {
		t.Errorf("unknown command: %v", err)
	}
}
