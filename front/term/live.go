package term

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model"
)

// live is the renderer's state between events: the streamed text not yet
// matched by its whole event, and the spinner's figures. Guarded by the
// Renderer's mu.
type live struct {
	stream, spin bool
	now          func() time.Time

	open     bool   // a streamed line is on screen, not ended
	thinking bool   // the open stream is reasoning
	text     string // streamed text not yet matched by a Text event
	reason   string // streamed reasoning not yet matched by a Thinking event

	active   bool            // the spinner runs: the model or a tool is at work
	shown    bool            // the spinner line is on screen, the cursor on the line below it
	typed    int             // rows of a typed line's echo just below our last output, if that was a line
	asked    map[string]bool // ids of the questions shown and not settled yet
	held     bool            // the spinner is held while the person types a note
	stopping bool            // an interrupt is on its way
	step     string          // the step at work
	began    time.Time
	phase    string // what it waits on
	out      int    // output tokens of the wake so far
	est      int    // output tokens of the answer streaming, estimated
	context  int    // the context level of the last answer
	cost     float64
	frame    int
}

var frames = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

// streamed prints a delta, or swallows the whole text that repeats what
// was streamed; it reports whether e was handled so.
func (r *Renderer) streamed(e event.Event) bool {
	l := &r.live
	switch e.Kind {
	case event.Delta:
		if l.stream {
			r.printDelta(e.Text, e.Payload["thinking"] == true)
		}
		return true
	case event.Text:
		if rest, ok := strings.CutPrefix(l.text, e.Text); ok && l.text != "" {
			l.text = rest
			r.endLine()
			return true
		}
	case event.Thinking:
		if rest, ok := strings.CutPrefix(l.reason, e.Text); ok && l.reason != "" {
			l.reason = rest
			r.endLine()
			return true
		}
	}
	return false
}

// printDelta writes a piece of streamed text; reasoning is dimmed and
// marked, as its whole event is.
func (r *Renderer) printDelta(s string, thinking bool) {
	l := &r.live
	r.clearSpinner()
	if l.open && l.thinking != thinking {
		r.endLine()
	}
	if thinking {
		l.reason += s
	} else {
		l.text += s
	}
	l.est += max(1, len(s)/4) // an estimate until the usage comes
	l.typed = 0
	out := modelText(s)
	if thinking {
		if !l.open {
			out = "  ∴ " + out
		}
		out = strings.ReplaceAll(out, "\n", "\n    ")
		if r.color {
			out = dim + out + reset
		}
	}
	fmt.Fprint(r.w, out)
	l.open, l.thinking = true, thinking
}

// endLine ends an open streamed line.
func (r *Renderer) endLine() {
	r.clearSpinner()
	if r.live.open {
		fmt.Fprintln(r.w)
		r.live.open = false
	}
}

// track moves the spinner's figures along with the run's events.
func (l *live) track(e event.Event, sub bool) {
	if step, ok := e.Payload["step"].(string); ok && step != "" && !sub && step != l.step {
		l.step, l.began = step, l.now()
	}
	switch e.Kind {
	case event.Step:
		l.active, l.phase, l.began = true, "waiting on the model", l.now()
		if s, ok := e.Payload["step"].(string); ok {
			l.step = s
		}
	case event.Usage:
		if !sub {
			l.text, l.reason = "", "" // a response is whole: nothing streamed is owed
		}
		out, _ := e.Payload["output"].(int)
		l.out, l.est = l.out+out, 0
		if c, ok := e.Payload["context"].(int); ok && !sub {
			l.context = c
		}
		if c, ok := e.Payload["cost"].(float64); ok {
			l.cost += c
		}
	case event.ToolCall:
		if !sub {
			l.active, l.phase = true, "running "+e.Tool
		}
	case event.ToolResult, event.Denied:
		if !sub {
			l.phase = "waiting on the model"
		}
	case event.Ask:
		if e.Payload["kind"] != "mail" && !sub {
			l.active = e.Payload["state"] != "asked"
		}
	case event.Interrupt:
		l.stopping = false
		if !sub { // a cut answer's text is owed no whole event
			l.text, l.reason, l.est = "", "", 0
		}
	case event.Result:
		if !sub {
			l.active, l.text, l.reason, l.est = false, "", "", 0
		}
	case event.Retry, event.Error:
		if !sub { // a retry streams the answer again from its start
			l.text, l.reason, l.est = "", "", 0
		}
		if e.Kind == event.Retry {
			l.phase = "waiting to retry"
			if e.Payload["reason"] == "offline" {
				l.phase = "offline, probing (Ctrl-C is safe)"
			}
		}
	}
}

// redraw shows the spinner line when the model or a tool is at work and no
// streamed line is open. The spinner stands on the line above the cursor,
// so what the person types while flower works echoes on a line of its own
// instead of after the spinner's text (issue 23): drawn anew, the cursor
// goes back where the echo left it.
func (r *Renderer) redraw() {
	l := &r.live
	if !l.spin || !l.active || l.open || l.held {
		r.clearSpinner()
		return
	}
	phase := l.phase
	if l.stopping {
		phase = "stopping after the current tool"
	}
	parts := []string{}
	if l.step != "" {
		parts = append(parts, l.step)
	}
	parts = append(parts, fmt.Sprintf("%ds", int(l.now().Sub(l.began).Seconds())))
	tokens := "↓" + kilo(l.out+l.est) + " tokens"
	if l.context > 0 {
		tokens = "context " + kilo(l.context) + " · " + tokens
	}
	parts = append(parts, tokens, model.USD(l.cost), phase)
	line := string(frames[l.frame%len(frames)]) + " " + strings.Join(parts, " · ")
	if l.shown {
		fmt.Fprint(r.w, saveCursor+up+"\r\x1b[K"+dim+line+reset+restoreCursor)
		return
	}
	fmt.Fprint(r.w, "\r\x1b[K"+dim+line+reset+"\r\n\x1b[K")
	l.shown, l.typed = true, 0
}

// The escapes that move the cursor about the spinner line.
const (
	saveCursor    = "\x1b7"
	restoreCursor = "\x1b8"
	up            = "\x1b[1A"
)

// clearSpinner takes the spinner line off the screen, and what was typed
// on the line below it, which the next line typed shows whole: the cursor
// goes back to the start of the spinner's line.
func (r *Renderer) clearSpinner() {
	if r.live.shown {
		fmt.Fprint(r.w, "\r\x1b[K"+up+"\r\x1b[K")
		r.live.shown = false
	}
}

// Typed is told of each line the person typed on the terminal, after its
// echo. Under the spinner it is shown again on its own line, the spinner
// below it; otherwise its rows are remembered, so that the answer it gives
// a question takes their place (Answered).
func (r *Renderer) Typed(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.live.spin { // plain lines: no escapes
		return
	}
	rows := r.rows(line)
	if !r.live.shown {
		if !r.live.open {
			r.live.typed += rows
		}
		return
	}
	// The echo took rows below the spinner; a tick may have drawn the
	// spinner over its last row since. Go to the spinner's row, clear
	// down, and write both again.
	fmt.Fprintf(r.w, "\x1b[%dA\r\x1b[J%s\r\n", rows+1, Clean(line))
	r.live.shown = false
	r.redraw()
}

// rows is how many rows of the terminal the echo of line took.
func (r *Renderer) rows(line string) int {
	n := len([]rune(line))
	if r.width == 0 || n == 0 {
		return 1
	}
	return (n + r.width - 1) / r.width
}

// unecho takes the echo of the lines typed since our last line off the
// screen, so that what they did is shown in their place.
func (r *Renderer) unecho() {
	if n := r.live.typed; n > 0 && !r.live.shown {
		fmt.Fprintf(r.w, "\x1b[%dA\r\x1b[J", n)
	}
	r.live.typed = 0
}

// Tick moves the spinner one frame and redraws it with the time now.
func (r *Renderer) Tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live.frame++
	r.redraw()
}

// Spin ticks the spinner every interval until ctx ends, then takes it off
// the screen. Without a spinner it returns at once.
func (r *Renderer) Spin(ctx context.Context, every time.Duration) {
	if !r.live.spin {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			r.Tick()
		case <-ctx.Done():
			r.mu.Lock()
			r.endLine()
			r.mu.Unlock()
			return
		}
	}
}

// Begin starts the spinner for an agent run without workflow steps (flower
// once): waiting on the model, from now.
func (r *Renderer) Begin(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := &r.live
	l.active, l.step, l.phase, l.began = true, name, "waiting on the model", l.now()
	r.redraw()
}

// Stopping makes the spinner say that an interrupt waits for the current
// tool, until the interrupt takes effect.
func (r *Renderer) Stopping() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live.stopping, r.live.held = true, false
	r.redraw()
}

// Hold takes the spinner off the screen until Stopping, or Release, so
// that what the person types stays visible.
func (r *Renderer) Hold(hold bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live.held, r.live.typed = hold, 0
	r.redraw()
}

// interruptLine says what an interrupt did; a model answer it cut was
// billed for the tokens it had streamed.
func interruptLine(e event.Event) string {
	s := "  interrupted"
	if e.Text != "" {
		s += ": continuing with your note"
	}
	if e.Payload["model_cut"] == true {
		s += " (the model's answer was cut; its tokens so far are paid)"
	}
	return s
}

// kilo shows a count of tokens: 950, 12.3k, 1.2M.
func kilo(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
