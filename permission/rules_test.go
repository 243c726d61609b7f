package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

func TestParseErrors(t *testing.T) {
	tests := []struct{ rule, want string }{
		{"", "empty rule"},
		{"Bash(git push", `missing ")"`},
		{"Bash)", `")" without "("`},
		{"bash(ls)", "did you mean Bash"},
		{"Bash()", "empty pattern"},
		{"Bash(git:* push)", `":*" may only end`},
		{"Task(x)", "Task takes no (pattern)"},
		{"WebFetch(https://x.org)", "WebFetch takes domain:HOST"},
		{"Read([)", "not a valid glob"},
		{"Ba sh", "not a tool name"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.rule)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", tt.rule, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): error spans lines: %q", tt.rule, err)
		}
	}
	for _, ok := range []string{"Bash", "Bash(*)", "Bash(git push:*)", "Bash(git * main)", "Write(.github/**)",
		"WebFetch(domain:*)", "WebFetch(domain:*.example.com)", "mcp__github__*", "mcp__github", "Read(//etc/**)", "Edit(~/x)"} {
		if _, err := Parse(ok); err != nil {
			t.Errorf("Parse(%q): %v", ok, err)
		}
	}
}

func TestNewNamesTheRule(t *testing.T) {
	_, err := New("/ws", nil, []string{"Bash"}, []string{"Bash(ls)", "Bash("})
	if err == nil || !strings.HasPrefix(err.Error(), `permissions.deny[1] "Bash(": missing ")"`) {
		t.Fatalf("err = %v", err)
	}
}

func in(kv ...string) json.RawMessage {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

func TestCheck(t *testing.T) {
	home, _ := os.UserHomeDir()
	ws := t.TempDir()
	r, err := New(ws,
		[]string{"Bash(go test:*)", "Bash(git push --dry-run)"},
		[]string{"Bash(git push:*)", "Write(.github/**)", "Bash(curl *)", "mcp__github"},
		[]string{"Bash(rm -rf /*)", "WebFetch(domain:evil.com)", "Read(.env)", "Edit(//etc/**)", "Bash(git * main)",
			"mcp__db__drop_*", "Read(~/.ssh/**)"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool  string
		input json.RawMessage
		want  Action
		rule  string
	}{
		{"Bash", in("command", "ls -la"), Ask, ""}, // Bash has allow rules, and none covers it
		{"Bash", in("command", "go test ./..."), Allow, "Bash(go test:*)"},
		{"Bash", in("command", "go test ./a && go test ./b"), Allow, "Bash(go test:*)"},
		{"Bash", in("command", "go test ./... && touch x"), Ask, ""}, // each command must be allowed
		{"Bash", in("command", "git push origin main"), Deny, "Bash(git * main)"},
		{"Bash", in("command", "git push"), Ask, "Bash(git push:*)"},
		{"Bash", in("command", "git pushx"), Ask, ""},
		{"Bash", in("command", "cd sub && git  push origin"), Ask, "Bash(git push:*)"},
		{"Bash", in("command", "echo hi; FOO=1 nohup git push -f"), Ask, "Bash(git push:*)"},
		{"Bash", in("command", "timeout 5 env A=b git push"), Ask, "Bash(git push:*)"},
		{"Bash", in("command", `bash -c "git push"`), Ask, "Bash(git push:*)"},
		{"Bash", in("command", `echo $(git push) | cat`), Ask, "Bash(git push:*)"},
		{"Bash", in("command", `(eval 'git push')`), Ask, "Bash(git push:*)"},
		{"Bash", in("command", `'git' "push"`), Ask, "Bash(git push:*)"},
		{"Bash", in("command", "git push --dry-run"), Ask, "Bash(git push:*)"}, // ask before allow, as Claude Code
		{"Bash", in("command", "rm -rf /tmp/x"), Deny, "Bash(rm -rf /*)"},
		{"Bash", in("command", "curl"), Ask, "Bash(curl *)"},
		{"Bash", in("command", "if true; then git push; fi ((("), Ask, "Bash(git push:*)"}, // does not parse: split roughly
		{"Write", in("file_path", ".github/workflows/ci.yml"), Ask, "Write(.github/**)"},
		{"Edit", in("file_path", filepath.Join(ws, ".github", "x")), Ask, "Write(.github/**)"},
		{"Write", in("file_path", "src/.github.go"), Allow, ""},
		{"Read", in("file_path", "config/.env"), Deny, "Read(.env)"},
		{"Grep", in("path", "."), Allow, ""},
		{"Glob", in("path", "sub/.env"), Deny, "Read(.env)"},
		{"Write", in("file_path", "/etc/passwd"), Deny, "Edit(//etc/**)"},
		{"Read", in("file_path", filepath.Join(home, ".ssh", "id_rsa")), Deny, "Read(~/.ssh/**)"},
		{"WebFetch", in("url", "https://api.Evil.com/x"), Deny, "WebFetch(domain:evil.com)"},
		{"WebFetch", in("url", "https://notevil.com/"), Allow, ""},
		{"mcp__github__create_issue", nil, Ask, "mcp__github"},
		{"mcp__githubx__create_issue", nil, Allow, ""},
		{"mcp__db__drop_table", nil, Deny, "mcp__db__drop_*"},
		{"Task", in("prompt", "git push"), Allow, ""},
	}
	for _, tt := range tests {
		got := r.Check(tt.tool, tt.input)
		if got.Action != tt.want || got.Rule != tt.rule {
			t.Errorf("Check(%s, %s) = %v %q, want %v %q", tt.tool, tt.input, got.Action, got.Rule, tt.want, tt.rule)
		}
		if unlisted := got.Action == Ask && tt.rule == ""; got.Unlisted != unlisted || unlisted && len(got.Asks) != 1 {
			t.Errorf("Check(%s, %s) = %+v, want Unlisted %v with the call's key", tt.tool, tt.input, got, unlisted)
		}
	}
}

// TestAllowListsATool: allow rules change nothing for tools they do not
// name; for a tool they name, they list what runs without asking.
func TestAllowListsATool(t *testing.T) {
	ws := t.TempDir()
	none, err := New(ws, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	some, err := New(ws, []string{"Bash(go test:*)", "WebFetch(domain:go.dev)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool       string
		input      json.RawMessage
		none, some Action
	}{
		{"Bash", in("command", "go test ./..."), Allow, Allow},
		{"Bash", in("command", "make"), Allow, Ask},
		{"WebFetch", in("url", "https://pkg.go.dev/x"), Allow, Allow},
		{"WebFetch", in("url", "https://example.com/"), Allow, Ask},
		{"Write", in("file_path", "x.go"), Allow, Allow}, // no allow rule names Write
	}
	for _, tt := range tests {
		if got := none.Check(tt.tool, tt.input).Action; got != tt.none {
			t.Errorf("no rules: Check(%s, %s) = %v, want %v", tt.tool, tt.input, got, tt.none)
		}
		if got := some.Check(tt.tool, tt.input).Action; got != tt.some {
			t.Errorf("allow rules: Check(%s, %s) = %v, want %v", tt.tool, tt.input, got, tt.some)
		}
	}
}

// TestSymlinkCannotDodge: a path through a symlink matches the rules of
// where it leads.
func TestSymlinkCannotDodge(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".github"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".github", filepath.Join(ws, "gh")); err != nil {
		t.Fatal(err)
	}
	r, err := New(ws, nil, nil, []string{"Write(.github/**)"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Check("Write", in("file_path", "gh/new.yml")); got.Action != Deny {
		t.Errorf("a write through a symlink: %v, want deny", got.Action)
	}
}

func TestAsksAll(t *testing.T) {
	r, _ := New("/ws", nil, []string{"Bash(git push:*)", "Bash(npm publish:*)"}, nil)
	got := r.Check("Bash", in("command", "npm publish && git push"))
	if !slices.Equal(got.Asks, []string{"Bash(git push:*)", "Bash(npm publish:*)"}) {
		t.Errorf("Asks = %v", got.Asks)
	}
}

func TestNilAllows(t *testing.T) {
	var r *Rules
	if got := r.Check("Bash", in("command", "rm -rf /")); got.Action != Allow {
		t.Errorf("nil rules: %v", got.Action)
	}
}

// FuzzCheck: no rule text or call input panics, and a Bash deny rule
// still denies its command however the line around it is written.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"git push", "a && git push", "$(", "'", "bash -c 'eval \"git push\"'", "Bash(x:*)"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, rule, command string) {
		if r, err := New("/ws", nil, []string{rule}, []string{rule}); err == nil {
			r.Check("Bash", in("command", command))
			r.Check("Write", in("file_path", command))
			r.Check("WebFetch", in("url", command))
		}
		// A complete line of its own (no open quote, continuation or
		// here-document) cannot stop the next line from running.
		if _, err := syntax.NewParser().Parse(strings.NewReader(command), ""); err != nil ||
			strings.HasSuffix(command, "\\") || strings.Contains(command, "<<") {
			return
		}
		r, _ := New("/ws", nil, nil, []string{"Bash(git push:*)"})
		if got := r.Check("Bash", in("command", command+"\ngit push")); got.Action != Deny {
			t.Errorf("%q + git push on its own line: %v", command, got.Action)
		}
	})
}
