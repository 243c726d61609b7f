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
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/human"
	xterm "golang.org/x/term"
)

// Renderer prints events. On a terminal it streams model text as it
// arrives and keeps a spinner line while the model or a tool works; colour
// and the spinner are used only on a terminal, and never when NO_COLOR is
// set or TERM is dumb: then, and when w is not a terminal, it prints plain
// lines (issue 11).
type Renderer struct {
	mu    sync.Mutex // guards w and live: events may come from several goroutines
	w     io.Writer
	color bool // colour and the spinner
	width int  // of the terminal in columns; 0 when unknown
	live  live
}

// NewRenderer renders to w, deciding from w and the environment how.
func NewRenderer(w io.Writer) *Renderer {
	tty := isTerminal(w)
	return NewRendererWith(w, Style{Stream: tty, Fancy: tty && plainEnv(os.Getenv) == ""})
}

// Style is how a Renderer prints.
type Style struct {
	Stream bool             // print model text as it streams (a terminal)
	Fancy  bool             // colour and a spinner line (a terminal that takes escapes)
	Now    func() time.Time // the spinner's clock; nil is time.Now
}

// NewRendererWith renders to w in style s.
func NewRendererWith(w io.Writer, s Style) *Renderer {
	if s.Now == nil {
		s.Now = time.Now
	}
	r := &Renderer{w: w, color: s.Fancy, live: live{stream: s.Stream, spin: s.Fancy, now: s.Now}}
	if f, ok := w.(*os.File); ok && s.Fancy {
		r.width, _, _ = xterm.GetSize(int(f.Fd()))
	}
	return r
}

// plainEnv names the setting that asks for plain output, or is "".
func plainEnv(getenv func(string) string) string {
	switch {
	case getenv("NO_COLOR") != "":
		return "NO_COLOR"
	case getenv("TERM") == "dumb":
		return "TERM=dumb"
	}
	return ""
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

// Render prints one event; kinds it does not show are skipped. Streamed
// text is printed as it comes, and the whole text that follows it is not
// printed again.
func (r *Renderer) Render(e event.Event) {
	e = cleanEvent(e) // untrusted text prints as text; our colours come after
	r.mu.Lock()
	defer r.mu.Unlock()
	sub, _ := e.Payload["subagent"].(string)
	if sub == "" && r.streamed(e) {
		return
	}
	r.live.track(e, sub != "")
	line, style := r.format(e)
	if line == "" {
		r.redraw()
		return
	}
	if sub != "" {
		line = indent("  ["+sub+"] ", line)
	}
	r.endLine()
	if e.Kind == event.Ask && e.Payload["state"] != "asked" {
		r.unecho() // the answer's line stands for the line typed
	}
	r.live.typed = 0
	if r.color && style != "" {
		line = style + line + reset
	}
	fmt.Fprintln(r.w, line)
	r.redraw()
}

// modelText is the one place where text the model wrote is turned into
// what is printed (streamed or whole).
func modelText(s string) string { return s }

func (r *Renderer) format(e event.Event) (string, string) {
	switch e.Kind {
	case event.Text:
		return modelText(e.Text), ""
	case event.Thinking:
		return indent("  ∴ ", firstLines(modelText(e.Text), 3)), dim
	case event.ToolCall:
		if e.Tool == human.AskName { // the question's own line shows it, once
			return "", ""
		}
		return "  " + e.String(), cyan
	case event.ToolResult:
		if e.Tool == human.AskName && e.Payload["is_error"] != true { // the settled line said it
			return "", ""
		}
		return indent("    ↳ ", firstLines(e.Text, 2)), dim
	case event.Denied:
		return "    ✗ " + firstLines(e.Text, 1), yellow
	case event.Error:
		return "  error: " + e.Text, red
	case event.Ask:
		return r.askLine(e), yellow
	case event.Step:
		return stepLine(e), cyan
	case event.Interrupt:
		return interruptLine(e), yellow
	case event.Retry, event.Handoff:
		if s, _ := e.Payload["offline_s"].(float64); s > 0 {
			return "", "" // the first offline notice said it all; the spinner shows the wait
		}
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
func (r *Renderer) askLine(e event.Event) string {
	switch e.Payload["kind"] {
	case "mail":
		return "  ✉ noted: the agent gets it at its next message boundary"
	case "mail_delivered":
		return "  ✉ delivered to the agent"
	}
	state, _ := e.Payload["state"].(string)
	q, _ := e.Payload["question"].(string)
	id, _ := e.Payload["id"].(string)
	if state != "asked" {
		shown := r.live.asked[id]
		delete(r.live.asked, id)
		if !shown { // settled before it was asked here (no wait, or asked elsewhere)
			return fmt.Sprintf("  ? %s — %s", q, strings.TrimPrefix(settledLine(state, e.Payload), "  ↳ "))
		}
		return settledLine(state, e.Payload)
	}
	if r.live.asked == nil {
		r.live.asked = map[string]bool{}
	}
	r.live.asked[id] = true
	s := "? " + q
	if opts, ok := e.Payload["options"].([]string); ok {
		for i, o := range opts {
			s += fmt.Sprintf("\n   %d) %s", i+1, o)
		}
	}
	return s + "\n  (type your answer and press Enter)"
}

// settledLine shows what became of a question printed just above: the
// answer recorded, once, not the question again (issue 23).
func settledLine(state string, p map[string]any) string {
	switch state {
	case "answered":
		if a, _ := p["answer"].(string); strings.TrimSpace(a) != "" {
			return indent("  ↳ answered: ", firstLines(a, 3))
		}
		return "  ↳ answered with nothing"
	case "declined":
		if why, _ := p["reason"].(string); why != "" {
			return "  ↳ declined: " + firstLines(why, 1)
		}
	}
	return "  ↳ " + strings.ReplaceAll(state, "_", " ")
}

// stepLine is a step event's title line: the header the engine rendered
// (its text is the bare step name, seed 004), else the text, as events of
// older builds and the banner carry it.
func stepLine(e event.Event) string {
	if h, ok := e.Payload["header"].(string); ok && h != "" {
		return h
	}
	return e.String()
}

// Clip cuts s to n runes, the last an ellipsis when it was longer.
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
