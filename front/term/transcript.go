package term

import (
	"fmt"
	"io"
	"strings"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/view"
)

// Transcript prints a session's messages as the model sees them (flower
// show): each message under its role, tool calls as [Tool] input, and
// results under an arrow, with terminal escapes cleaned out. Each of left
// is a line after the block it follows, so what the view left out shows
// where it happened; one whose block is not shown comes last.
func Transcript(w io.Writer, msgs []model.Message, left ...view.Left) {
	after := map[model.Block][]view.Left{}
	for _, l := range left {
		after[l.After] = append(after[l.After], l)
	}
	marks := func(b model.Block) {
		for _, l := range after[b] {
			fmt.Fprintln(w, Clean(l.String()))
		}
		delete(after, b)
	}
	marks(nil)
	for _, m := range msgs {
		fmt.Fprintf(w, "── %s\n", m.Role)
		for _, b := range m.Content {
			block(w, b)
			marks(b)
		}
	}
	for _, l := range left { // their blocks were repaired away: keep the order, lose none
		if _, unshown := after[l.After]; unshown {
			fmt.Fprintln(w, Clean(l.String()))
		}
	}
}

// block prints one block of a message.
func block(w io.Writer, b model.Block) {
	switch v := b.(type) {
	case *model.Text:
		fmt.Fprintln(w, Clean(v.Text))
	case *model.Thinking:
		fmt.Fprintln(w, "(thinking) "+Clean(v.Thinking))
	case *model.ToolUse:
		fmt.Fprintf(w, "[%s] %s\n", Clean(v.Name), Clean(PlainJSON(v.Input)))
	case *model.ToolResult:
		mark := "↳"
		if v.IsError {
			mark = "↳ error:"
		}
		fmt.Fprintln(w, mark, Clean(v.Content))
	}
}

// htmlEscapes are the escapes encoding/json writes by default for <, > and &.
var htmlEscapes = map[string]string{`\u003c`: "<", `\u003e`: ">", `\u0026`: "&"}

// PlainJSON is raw JSON with its \u003c, \u003e and \u0026 escapes turned
// back into characters, byte for byte otherwise (key order kept). An
// escaped backslash before "u003c" is left alone.
func PlainJSON(raw []byte) string {
	s := string(raw)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+6 <= len(s) {
			if c, ok := htmlEscapes[strings.ToLower(s[i:i+6])]; ok {
				b.WriteString(c)
				i += 5
				continue
			}
		}
		if i+1 < len(s) { // any other escape, "\\" included, is copied whole
			b.WriteString(s[i : i+2])
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
