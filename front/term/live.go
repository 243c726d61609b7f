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

	active   bool   // the spinner runs: the model or a tool is at work
	shown    bool   // the spinner line is on screen
	held     bool   // the spinner is held while the person types a note
	stopping bool   // an interrupt is on its way
	step     string // the step at work
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
// streamed line is open.
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
	fmt.Fprint(r.w, "\r\x1b[K"+dim+line+reset)
	l.shown = true
}

// clearSpinner takes the spinner line off the screen.
func (r *Renderer) clearSpinner() {
	if r.live.shown {
		fmt.Fprint(r.w, "\r\x1b[K")
		r.live.shown = false
	}
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
	r.live.held = hold
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
