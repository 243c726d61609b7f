package headless

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/flower-run/flower/permission"
)

// TestRoute: Claude Code's command lines (claude -p, the Agent SDK's
// stream-json argv) are headless; the program's own commands, and those
// flags after "--" or as a task's words, are not (issue 21 item 3; moved
// from cmd/flower, issue 19).
func TestRoute(t *testing.T) {
	commands := []string{"once", "serve", "help"}
	isCommand := func(w string) bool { return slices.Contains(commands, w) }
	for _, c := range []struct {
		args string
		want bool
	}{
		{"-p hello", true},
		{"--print hello", true},
		{"--output-format stream-json --verbose --input-format stream-json", true},
		{"--output-format=json -p x", true},
		{"--model demo -p x", true},
		{"once --output-format json x", false},
		{"help -p", false},
		{"write the report", false},
		{"-- -p", false},
		{"", false},
	} {
		if got := Route(strings.Fields(c.args), isCommand); got != c.want {
			t.Errorf("%q: %v, want %v", c.args, got, c.want)
		}
	}
}

// TestNoteIgnored: --debug names each long flag flower does not know,
// once, and nothing after "--".
func TestNoteIgnored(t *testing.T) {
	known := func(name string) bool { return name == "print" || name == "verbose" }
	var w bytes.Buffer
	NoteIgnored(&w, []string{"--print", "--setting-sources=user", "-c", "--verbose", "--include-partial-messages", "--", "--after"}, known)
	want := "flower: debug: Claude Code flag --setting-sources ignored\nflower: debug: Claude Code flag --include-partial-messages ignored\n"
	if w.String() != want {
		t.Errorf("%q, want %q", w.String(), want)
	}
}

// TestFlagsCheck: each bad value is refused with the flag's name and what
// it takes; --dangerously-skip-permissions is bypassPermissions.
func TestFlagsCheck(t *testing.T) {
	ok := Flags{Output: FormatJSON, Input: "text", Mode: "plan"}
	if m, err := ok.Check(); err != nil || m != permission.ModePlan {
		t.Fatalf("%v %v", m, err)
	}
	skip := ok
	skip.SkipPermissions = true
	if m, err := skip.Check(); err != nil || m != permission.ModeBypass {
		t.Errorf("skip: %v %v", m, err)
	}
	for _, c := range []struct {
		f    func(*Flags)
		want string
	}{
		{func(f *Flags) { f.Output = "xml" }, `--output-format "xml": use text, json, stream-json or flower-events`},
		{func(f *Flags) { f.Mode = "sometimes" }, "--permission-mode: "},
		{func(f *Flags) { f.PromptTool = "mcp__x" }, "--permission-prompt-tool \"mcp__x\""},
		{func(f *Flags) { f.Input = "yaml" }, `--input-format "yaml": use text or stream-json`},
	} {
		f := ok
		c.f(&f)
		if _, err := f.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", f, err, c.want)
		}
	}
}
