package term

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flower-run/flower/event"
)

func TestCleanRemovesControlSequences(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"a\x1b]52;c;SGVsbG8=\x07b", "ab"},         // OSC 52: set the clipboard
		{"a\x1b]52;c;SGVsbG8=\x1b\\b", "ab"},       // OSC 52 ended by ST
		{"a\x1b]0;pwned title\x07b", "ab"},         // window title
		{"\x1b[2J\x1b[Hcleared", "cleared"},        // clear screen, home
		{"red \x1b[31mtext\x1b[0m", "red text"},    // colours from the agent's world
		{"x\u009b31my\u009d52;c;AA\u009cz", "xyz"}, // 8-bit CSI and OSC
		{"bell\a back\bspace\rcr", "bell backspacecr"},
		{"\x1bcreset", "reset"},
		{"unterminated \x1b]52;c;AAAA", "unterminated "},
		{"héllo ✓", "héllo ✓"},
		{"bad \xff byte", "bad \ufffd byte"},
	}
	for _, c := range cases {
		if got := Clean(c.in); got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// An OSC 52 sequence in tool output never reaches the terminal, in any
// field the renderer prints (issue 10).
func TestRendererPrintsNoEscapeFromTheAgent(t *testing.T) {
	var out bytes.Buffer
	r := &Renderer{w: &out, color: true}
	osc := "\x1b]52;c;cm0gLXJmIH4=\x07"
	r.Render(event.Event{Kind: event.ToolResult, Tool: "Bash", Text: "output" + osc})
	r.Render(event.Event{Kind: event.Text, Text: "model says" + osc})
	r.Render(event.Event{Kind: event.ToolCall, Tool: "Read" + osc, Payload: map[string]any{"input": `{"file_path":"x` + osc + `"}`}})
	r.Render(event.Event{Kind: event.Ask, Payload: map[string]any{"state": "asked", "question": "q" + osc, "options": []string{"a" + osc}}})
	got := out.String()
	if strings.Contains(got, "\x1b]") || strings.Contains(got, "52;c") {
		t.Errorf("the terminal received an OSC sequence:\n%q", got)
	}
	if !strings.Contains(got, cyan) || !strings.Contains(got, "output") {
		t.Errorf("flower's own colours or the text went missing:\n%q", got)
	}
}
