package term_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flower-run/flower/front/term"
	"github.com/flower-run/flower/model"
)

func TestPlainJSONShowsRealCharacters(t *testing.T) {
	for in, want := range map[string]string{
		`{"command":"echo a \u003e b \u0026\u0026 cat \u003cin"}`: `{"command":"echo a > b && cat <in"}`,
		`{"s":"\\u003e stays"}`:                                   `{"s":"\\u003e stays"}`,
		`{"s":"\\\u003e"}`:                                        `{"s":"\\>"}`,
		`{"q":"say \"hi\""}`:                                      `{"q":"say \"hi\""}`,
	} {
		if got := term.PlainJSON([]byte(in)); got != want {
			t.Errorf("PlainJSON(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestTranscriptShowsEachMessageUnderItsRole, tool input with real
// characters, and no terminal escape the model or a tool wrote.
func TestTranscriptShowsEachMessageUnderItsRole(t *testing.T) {
	var b strings.Builder
	term.Transcript(&b, []model.Message{
		{Role: model.User, Content: []model.Block{&model.Text{Text: "make it \x1b[31mred"}}},
		{Role: model.Assistant, Content: []model.Block{&model.Thinking{Thinking: "easy"},
			&model.ToolUse{ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command":"a \u003e b"}`)}}},
		{Role: model.User, Content: []model.Block{&model.ToolResult{ToolUseID: "t1", Content: "no such file", IsError: true}}},
	})
	want := "── user\nmake it red\n── assistant\n(thinking) easy\n[Bash] {\"command\":\"a > b\"}\n── user\n↳ error: no such file\n"
	if b.String() != want {
		t.Errorf("transcript\n%q\nwant\n%q", b.String(), want)
	}
}
