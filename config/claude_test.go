package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flower-run/flower/permission"
)

// claudeWorkspace is a workspace with the given files, and a home of its
// own (HOME) so the person's real ~/.claude is never read.
func claudeWorkspace(t *testing.T, files map[string]string) (ws, home string) {
	t.Helper()
	root := t.TempDir()
	ws, home = filepath.Join(root, "ws"), filepath.Join(root, "home")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	for name, text := range files {
		p := filepath.Join(ws, name)
		if rest, ok := strings.CutPrefix(name, "~/"); ok {
			p = filepath.Join(home, rest)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.MkdirAll(ws, 0o755)
	return ws, home
}

// TestClaudeSettingsMerge (issue 21 item 1): the user's, the project's and
// the local settings files all count; their rules add up with flower.yaml's,
// a deny wins wherever it is written, and for scalars and env the local
// file wins over the project's over the user's.
func TestClaudeSettingsMerge(t *testing.T) {
	ws, home := claudeWorkspace(t, map[string]string{
		"~/.claude/settings.json": `{"permissions": {"allow": ["Bash(rm:*)"], "defaultMode": "plan"},
			"env": {"A": "user", "B": "user"}, "model": "ignored"}`,
		".claude/settings.json": `{"permissions": {"deny": ["Bash(rm:*)"], "ask": ["Bash(git push:*)"],
			"additionalDirectories": ["../shared", "~/notes"], "defaultMode": "acceptEdits"},
			"env": {"B": "project"},
			"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo pre"}]}]}}`,
		".claude/settings.local.json": `{"env": {"B": "local"}, "permissions": {"allow": ["Read(./src/**)"]},
			"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "echo local", "timeout": 5}]}]}}`,
		"flower.yaml": "permissions:\n  allow: [\"Bash(go test:*)\"]\n",
	})
	cfg, err := Load(ws)
	if err != nil {
		t.Fatal(err)
	}
	cl := cfg.Claude
	want := []string{filepath.Join(home, ".claude/settings.json"), filepath.Join(ws, ".claude/settings.json"), filepath.Join(ws, ".claude/settings.local.json")}
	if !slices.Equal(cl.Files, want) {
		t.Errorf("files read %v, want %v", cl.Files, want)
	}
	if cl.DefaultMode != "acceptEdits" || cl.Env["A"] != "user" || cl.Env["B"] != "local" {
		t.Errorf("mode %q env %v: want acceptEdits, A=user, B=local", cl.DefaultMode, cl.Env)
	}
	if got := cl.AdditionalDirectories; !slices.Equal(got, []string{filepath.Join(filepath.Dir(ws), "shared"), filepath.Join(home, "notes")}) {
		t.Errorf("additional directories %v", got)
	}
	if sb := cfg.SandboxConfig(ws); !slices.Contains(sb.Writable, filepath.Join(home, "notes")) {
		t.Errorf("sandbox writable %v lacks the additional directory", sb.Writable)
	}
	if n := len(cl.Hooks["PreToolUse"]); n != 2 || cl.Hooks.Count() != 2 {
		t.Errorf("PreToolUse groups %d, hooks %d: want both files' (2)", n, cl.Hooks.Count())
	}
	rules, err := cfg.PermissionRules(ws)
	if err != nil {
		t.Fatal(err)
	}
	check := func(tool, input string, want permission.Action) {
		t.Helper()
		if d := rules.Check(tool, json.RawMessage(input)); d.Action != want {
			t.Errorf("%s %s: %v (rule %q), want %v", tool, input, d.Action, d.Rule, want)
		}
	}
	check("Bash", `{"command":"rm -f keep.txt"}`, permission.Deny) // the user's allow loses to the project's deny
	check("Bash", `{"command":"git push origin"}`, permission.Ask)
	check("Bash", `{"command":"go test ./..."}`, permission.Allow) // flower.yaml's rule is in the same set
	if o := cfg.RuleOrigin("Bash(rm:*)"); o != filepath.Join(home, ".claude/settings.json") {
		t.Errorf("origin of Bash(rm:*) = %q: the first file that lists it", o)
	}
	if o := cfg.RuleOrigin("Bash(go test:*)"); o != FileName {
		t.Errorf("origin of a flower.yaml rule = %q", o)
	}
}

// TestClaudeSettingsErrors: a bad settings file is one line naming the
// file, the line and column, and the fix.
func TestClaudeSettingsErrors(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"syntax", "{\n  \"permissions\": {\"deny\": [\"Bash(rm:*)\",]}\n}", `settings.json:2:`},
		{"bad rule", "{\"permissions\": {\n  \"deny\": [\"Bash(rm:*\"]}}", `settings.json:2:12: permissions.deny[0]: rule "Bash(rm:*": missing ")"`},
		{"type", "{\"permissions\": {\"deny\": \"Bash\"}}", `permissions.deny: got a JSON string, want a list`},
		{"unknown key", "{\"permissions\": {\n \"alow\": []}}", `settings.json:2:2: permissions.alow: unknown key "alow"`},
		{"mode", `{"permissions": {"defaultMode": "yolo"}}`, `permissions.defaultMode: unknown mode "yolo" (use default, acceptEdits`},
		{"event", "{\"hooks\": {\n\"PreToolUs\": []}}", `settings.json:2:1: hooks.PreToolUs: unknown event "PreToolUs" (use one of PreToolUse`},
		{"matcher", `{"hooks": {"PreToolUse": [{"matcher": "Bash(", "hooks": [{"type": "command", "command": "x"}]}]}}`, `hooks.PreToolUse[0].matcher: matcher "Bash(" is not a regular expression`},
		{"type hook", `{"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]}}`, `hooks.Stop[0].hooks[0].type: type "prompt" is not run by flower (write "type": "command")`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, _ := claudeWorkspace(t, map[string]string{".claude/settings.json": c.text})
			_, err := Load(ws)
			if err == nil {
				t.Fatalf("no error for %s", c.text)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, filepath.Join(ws, ".claude/settings.json")) {
				t.Errorf("error %q\nwant one line starting with the file, containing %q", msg, c.want)
			}
		})
	}
}

// TestClaudeSettingsNone: without settings files nothing changes.
func TestClaudeSettingsNone(t *testing.T) {
	ws, _ := claudeWorkspace(t, nil)
	cfg, err := Load(ws)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Claude.Files) != 0 || cfg.Claude.Hooks.Count() != 0 {
		t.Errorf("claude settings without files: %+v", cfg.Claude)
	}
}
