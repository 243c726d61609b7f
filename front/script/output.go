// Package script is the output of one agent's run (flower once, or
// Host.Once in a program) for a person or a script: flower's own live
// transcript (front/term's renderer), or the formats of Claude Code's -p,
// so a script written for one reads the other.
package script

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/front/term"
	"github.com/flower-run/flower/model"
)

// Output formats of flower once, as Claude Code's -p has them: the
// default is flower's own rendering; text is the final result alone; json
// is one object at the end; stream-json is one event per line, shaped as
// GET /events serves them, then the json object as the last line.
const (
	Human      = ""
	Text       = "text"
	JSON       = "json"
	StreamJSON = "stream-json"
)

// Check refuses a format that is none of these.
func Check(format string) error {
	switch format {
	case Human, Text, JSON, StreamJSON:
		return nil
	}
	return fmt.Errorf("--output-format %q: use text, json or stream-json", format)
}

// Output turns a run's events and result into the chosen format.
type Output struct {
	format string
	model  string // the model's name, for modelUsage
	out    io.Writer
	r      *term.Renderer

	mu      sync.Mutex // guards seq, usage, denials, api, since and enc's writes
	seq     int
	usage   usageSum
	denials []permissionDenial
	inputs  map[string]any // tool call id → input, for denials
	api     time.Duration  // time spent waiting for the model (duration_api_ms)
	since   time.Time
	enc     *json.Encoder
}

// permissionDenial is one entry of Claude Code's permission_denials.
type permissionDenial struct {
	Tool  string `json:"tool_name"`
	ID    string `json:"tool_use_id"`
	Input any    `json:"tool_input"`
}

// usageSum adds up the tokens of every model response of a run.
type usageSum struct {
	Input         int `json:"input_tokens"`
	Output        int `json:"output_tokens"`
	CacheRead     int `json:"cache_read_input_tokens"`
	CacheCreation int `json:"cache_creation_input_tokens"`
}

// New writes the output of one run in format (Check it first) to out.
func New(format string, out io.Writer) *Output {
	o := &Output{format: format, out: out, enc: json.NewEncoder(out), inputs: map[string]any{}, since: time.Now()}
	if format == Human {
		o.r = term.NewRenderer(out)
	}
	return o
}

// Spin starts the human format's spinner line (a no-op for the other
// formats and where the renderer prints plain lines); the returned func
// stops it and waits for its last redraw.
func (o *Output) Spin(ctx context.Context) func() {
	if o.r == nil {
		return func() {}
	}
	o.r.Begin("once")
	ctx, cancel := context.WithCancel(ctx)
	spun := make(chan struct{})
	go func() { defer close(spun); o.r.Spin(ctx, term.SpinEvery) }()
	return func() { cancel(); <-spun }
}

// Sink receives the run's events.
func (o *Output) Sink(e event.Event) {
	if o.r != nil {
		o.r.Render(e)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.track(e)
	if o.format != StreamJSON {
		return
	}
	o.seq++
	p := e.Payload
	if p == nil {
		p = map[string]any{}
	}
	line := map[string]any{"seq": o.seq, "kind": e.Kind, "text": e.Text, "tool": e.Tool, "payload": p}
	if err := o.enc.Encode(line); err != nil {
		line["payload"] = map[string]any{"unencodable": err.Error()}
		_ = o.enc.Encode(line)
	}
}

// SetModel names the model for the json result's modelUsage.
func (o *Output) SetModel(name string) { o.model = name }

// track keeps what the result object sums up: tokens, model time and
// the calls the rules denied.
func (o *Output) track(e event.Event) {
	if _, sub := e.Payload["subagent"]; sub {
		return
	}
	switch e.Kind {
	case event.Usage:
		o.usage.add(e.Payload)
		o.api += time.Since(o.since)
		o.since = time.Now()
	case event.ToolCall:
		id, _ := e.Payload["id"].(string)
		o.inputs[id] = e.Payload["input"]
	case event.ToolResult, event.Denied:
		o.since = time.Now()
		if e.Kind == event.Denied {
			id, _ := e.Payload["id"].(string)
			o.denials = append(o.denials, permissionDenial{Tool: e.Tool, ID: id, Input: o.inputs[id]})
		}
	}
}

func (u *usageSum) add(p map[string]any) {
	n := func(k string) int {
		switch v := p[k].(type) {
		case int:
			return v
		case float64:
			return int(v)
		}
		return 0
	}
	u.Input += n("input")
	u.Output += n("output")
	u.CacheRead += n("cache_read")
	u.CacheCreation += n("cache_creation")
}

// onceResult is the json format's object, with Claude Code's field names.
type onceResult struct {
	Type        string                `json:"type"`
	Subtype     string                `json:"subtype"`
	SessionID   string                `json:"session_id"`
	Result      string                `json:"result"`
	IsError     bool                  `json:"is_error"`
	Error       string                `json:"error,omitempty"`
	NumTurns    int                   `json:"num_turns"`
	TotalCost   float64               `json:"total_cost_usd"`
	DurationMS  int64                 `json:"duration_ms"`
	DurationAPI int64                 `json:"duration_api_ms"`
	StopReason  *string               `json:"stop_reason"`
	Usage       usageSum              `json:"usage"`
	ModelUsage  map[string]modelUsage `json:"modelUsage"`
	Denials     []permissionDenial    `json:"permission_denials"`
}

// modelUsage is one model's entry of Claude Code's modelUsage.
type modelUsage struct {
	Input         int     `json:"inputTokens"`
	Output        int     `json:"outputTokens"`
	CacheRead     int     `json:"cacheReadInputTokens"`
	CacheCreation int     `json:"cacheCreationInputTokens"`
	Cost          float64 `json:"costUSD"`
}

// Done writes the end of the output.
func (o *Output) Done(res agent.Result) {
	switch o.format {
	case Human:
		fmt.Fprintf(o.out, "\nsession %s · %d turns · %s · context %s\n", res.SessionID, res.Turns, model.USD(res.Cost), kilo(res.Context))
	case Text:
		if res.Text != "" {
			fmt.Fprintln(o.out, res.Text)
		}
	case JSON, StreamJSON:
		o.mu.Lock()
		defer o.mu.Unlock()
		sub, stop := "success", "end_turn"
		if !res.OK {
			sub, stop = "error_"+string(res.Stop), ""
		}
		r := onceResult{Type: "result", Subtype: sub, SessionID: res.SessionID, Result: res.Text,
			IsError: !res.OK, Error: res.Error, NumTurns: res.Turns, TotalCost: res.Cost,
			DurationMS: res.End.Sub(res.Start).Milliseconds(), DurationAPI: o.api.Milliseconds(), Usage: o.usage,
			ModelUsage: map[string]modelUsage{o.model: {Input: o.usage.Input, Output: o.usage.Output,
				CacheRead: o.usage.CacheRead, CacheCreation: o.usage.CacheCreation, Cost: res.Cost}},
			Denials: o.denials}
		if r.Denials == nil {
			r.Denials = []permissionDenial{}
		}
		if stop != "" {
			r.StopReason = &stop
		}
		_ = o.enc.Encode(r)
	}
}

// kilo renders a token count as 80.2K.
func kilo(n int) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%.1fK", float64(n)/1000)
}
