// Package term is the terminal front end: a renderer that turns the event
// stream into lines for a person. It is the one piece to replace for
// another UI (R6.6).
package term

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/flower-run/flower/event"
)

// Renderer prints events. Colour is used only on a terminal and never when
// NO_COLOR is set.
type Renderer struct {
	mu    sync.Mutex // guards w: events may come from several goroutines
	w     io.Writer
	color bool
}

// NewRenderer renders to w; colour when w is a terminal and NO_COLOR is unset.
func NewRenderer(w io.Writer) *Renderer {
	return &Renderer{w: w, color: isTerminal(w) && os.Getenv("NO_COLOR") == ""}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

const (
	dim    = "\x1b[2m"
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	cyan   = "\x1b[36m"
	reset  = "\x1b[0m"
)

// Render prints one event; kinds it does not show are skipped.
func (r *Renderer) Render(e event.Event) {
	e = cleanEvent(e) // untrusted text prints as text; our colours come after
	line, style := r.format(e)
	if line == "" {
		return
	}
	if sub, ok := e.Payload["subagent"].(string); ok && sub != "" {
		line = indent("  ["+sub+"] ", line)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.color && style != "" {
		line = style + line + reset
	}
	fmt.Fprintln(r.w, line)
}

func (r *Renderer) format(e event.Event) (string, string) {
	switch e.Kind {
	case event.Text:
		return e.Text, ""
	case event.Thinking:
		return indent("  ∴ ", firstLines(e.Text, 3)), dim
	case event.ToolCall:
		return "  " + e.String(), cyan
	case event.ToolResult:
		return indent("    ↳ ", firstLines(e.Text, 2)), dim
	case event.Denied:
		return "    ✗ " + firstLines(e.Text, 1), yellow
	case event.Error:
		return "  error: " + e.Text, red
	case event.Ask:
		return askLine(e), yellow
	case event.Step:
		return e.String(), cyan
	case event.Retry, event.Interrupt, event.Handoff:
		return "  " + e.String(), yellow
	default:
		return "", ""
	}
}

// firstLines keeps the first n lines of s and says how many were left out.
func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… %d more lines", len(lines)-n)
}

func indent(prefix, s string) string {
	pad := strings.Repeat(" ", len([]rune(prefix)))
	lines := strings.Split(s, "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = prefix + lines[i]
		} else {
			lines[i] = pad + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// askLine shows a question with numbered options, a settled ask briefly,
// and mail as an acknowledgement.
func askLine(e event.Event) string {
	if e.Payload["kind"] == "mail" {
		return "  ✉ sent to the agent's inbox"
	}
	state, _ := e.Payload["state"].(string)
	q, _ := e.Payload["question"].(string)
	if state != "asked" {
		return fmt.Sprintf("  ? %s — %s", clip(q, 60), state)
	}
	s := "? " + q
	if opts, ok := e.Payload["options"].([]string); ok {
		for i, o := range opts {
			s += fmt.Sprintf("\n   %d) %s", i+1, o)
		}
	}
	return s + "\n  (type your answer and press Enter)"
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
