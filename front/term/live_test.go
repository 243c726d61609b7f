package term

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/human"
)

// clock is a test clock moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func stepped(e event.Event) event.Event {
	p := map[string]any{"step": "work"}
	for k, v := range e.Payload {
		p[k] = v
	}
	e.Payload = p
	return e
}

// Streamed text shows as it comes and is not printed again whole; the
// spinner shows step, time, tokens, cost and what it waits on, and is off
// the screen while text streams (issue 11).
func TestStreamAndSpinner(t *testing.T) {
	var b bytes.Buffer
	c := &clock{t: time.Unix(1000, 0)}
	r := NewRendererWith(&b, Style{Stream: true, Fancy: true, Now: c.now})
	r.Render(event.Event{Kind: event.Step, Text: "== 3/4 work", Payload: map[string]any{"step": "work"}})
	c.t = c.t.Add(2 * time.Second)
	r.Tick()
	if got := b.String(); !strings.Contains(got, "work · 2s") || !strings.Contains(got, "waiting on the model") {
		t.Fatalf("spinner while waiting: %q", got)
	}
	b.Reset()
	r.Render(stepped(event.Event{Kind: event.Delta, Text: "Hel"}))
	if got := b.String(); got != "\r\x1b[K\x1b[1A\r\x1b[KHel" {
		t.Fatalf("first delta: %q (the spinner must leave its line, and the cursor the line below it, first)", got)
	}
	r.Tick() // no spinner over an open line
	r.Render(stepped(event.Event{Kind: event.Delta, Text: "lo"}))
	r.Render(stepped(event.Event{Kind: event.Text, Text: "Hello"}))
	r.Render(stepped(event.Event{Kind: event.Usage, Payload: map[string]any{"output": 1500, "context": 12000, "cost": 0.0031}}))
	r.Render(stepped(event.Event{Kind: event.ToolCall, Tool: "Bash", Text: "make test"}))
	if got := b.String(); !strings.HasPrefix(got, "\r\x1b[K\x1b[1A\r\x1b[KHello\n") || strings.Count(got, "Hello") != 1 {
		t.Fatalf("streamed text, then its whole event: %q", got)
	}
	b.Reset()
	c.t = c.t.Add(5 * time.Second)
	r.Tick()
	got := b.String()
	for _, want := range []string{"work · 7s", "context 12.0k", "↓1.5k tokens", "$0.0031", "running Bash"} {
		if !strings.Contains(got, want) {
			t.Errorf("spinner %q lacks %q", got, want)
		}
	}
	r.Stopping()
	if got := b.String(); !strings.Contains(got, "stopping after the current tool") {
		t.Errorf("spinner after an interrupt: %q", got)
	}
}

// Without a terminal (or with NO_COLOR, TERM=dumb) there are plain lines:
// no escapes, no spinner, whole texts only.
func TestPlainLines(t *testing.T) {
	var b bytes.Buffer
	r := NewRenderer(&b) // a buffer is not a terminal
	r.Render(event.Event{Kind: event.Step, Text: "== work", Payload: map[string]any{"step": "work"}})
	r.Render(stepped(event.Event{Kind: event.Delta, Text: "Hel"}))
	r.Tick()
	r.Render(stepped(event.Event{Kind: event.Text, Text: "Hello"}))
	r.Render(stepped(event.Event{Kind: event.ToolCall, Tool: "Bash", Text: "ls"}))
	r.Tick()
	if got := b.String(); got != "== work\nHello\n  [Bash] ls\n" {
		t.Fatalf("plain output %q", got)
	}
	for env, want := range map[[2]string]string{{"NO_COLOR", "1"}: "NO_COLOR", {"TERM", "dumb"}: "TERM=dumb", {"TERM", "xterm"}: ""} {
		if got := plainEnv(func(k string) string {
			if k == env[0] {
				return env[1]
			}
			return ""
		}); got != want {
			t.Errorf("%v: plainEnv %q", env, got)
		}
	}
}

// flower once has no steps: Begin starts the spinner, the result stops it.
func TestBeginSpinsUntilTheResult(t *testing.T) {
	var b bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	r := NewRendererWith(&b, Style{Stream: true, Fancy: true, Now: c.now})
	r.Begin("once")
	c.t = c.t.Add(3 * time.Second)
	r.Tick()
	if !strings.Contains(b.String(), "once · 3s") {
		t.Fatalf("spinner %q", b.String())
	}
	r.Render(event.Event{Kind: event.Result})
	b.Reset()
	r.Tick()
	if b.Len() != 0 {
		t.Errorf("spinner after the result: %q", b.String())
	}
}

// An answer cut by an interrupt stays as it was streamed; the next
// answer is printed once (issue 11).
func TestCutAnswerThenTheNext(t *testing.T) {
	var b bytes.Buffer
	r := NewRendererWith(&b, Style{Stream: true})
	r.Render(event.Event{Kind: event.Delta, Text: "a long ans"})
	r.Render(event.Event{Kind: event.Interrupt, Text: "shorter", Payload: map[string]any{"model_cut": true}})
	r.Render(event.Event{Kind: event.Delta, Text: "Short."})
	r.Render(event.Event{Kind: event.Text, Text: "Short."})
	want := "a long ans\n  interrupted: continuing with your note (the model's answer was cut; its tokens so far are paid)\nShort.\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
}

// A line typed under the spinner is written again on its own line with
// the spinner below it; a line typed to answer a question gives way to
// the recorded answer, and the question is not repeated (issue 23).
func TestTypedLines(t *testing.T) {
	var b bytes.Buffer
	c := &clock{t: time.Unix(1000, 0)}
	r := NewRendererWith(&b, Style{Stream: true, Fancy: true, Now: c.now})
	r.Render(stepped(event.Event{Kind: event.ToolCall, Tool: "Bash", Text: "make"}))
	b.Reset()
	r.Typed("use British spelling")
	if got, want := b.String(), "\x1b[2A\r\x1b[Juse British spelling\r\n\r\x1b[K"; !strings.HasPrefix(got, want) ||
		!strings.HasSuffix(got, "running Bash"+reset+"\r\n\x1b[K") {
		t.Fatalf("typed under the spinner: %q", got)
	}
	ask := human.Ask{ID: "q1", Question: "Which colour?", Options: []string{"red", "blue"}}
	r.Render(stepped(event.Event{Kind: event.ToolCall, Tool: human.AskName, Text: ask.Question}))
	r.Render(stepped(event.Event{Kind: event.Ask, Raw: ask, Payload: map[string]any{"kind": "question", "id": "q1",
		"question": ask.Question, "options": ask.Options, "state": "asked"}}))
	if strings.Contains(b.String(), "[ask]") || strings.Count(b.String(), "Which colour?") != 1 {
		t.Fatalf("the question: %q", b.String())
	}
	r.Typed("2")
	b.Reset()
	r.Render(stepped(event.Event{Kind: event.Ask, Raw: ask, Payload: map[string]any{"kind": "question", "id": "q1",
		"question": ask.Question, "state": "answered", "answer": "blue"}}))
	r.Render(stepped(event.Event{Kind: event.ToolResult, Tool: human.AskName, Text: "The person answered:\n\nblue"}))
	got := b.String()
	if !strings.HasPrefix(got, "\x1b[1A\r\x1b[J") || !strings.Contains(got, "  ↳ answered: blue") ||
		strings.Contains(got, "Which colour") || strings.Count(got, "blue") != 1 {
		t.Fatalf("the answer: %q", got)
	}
}
