package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model"
)

// normalize turns one model response into events, in one place (R6.2).
// Every event of a model message carries the context level (R4.8).
func normalize(resp *model.Response, context, window int, cost float64) []event.Event {
	level := map[string]any{"context": context, "window": window}
	var out []event.Event
	for _, b := range resp.Message.Content {
		switch v := b.(type) {
		case *model.Thinking:
			if v.Thinking != "" {
				out = append(out, event.Event{Kind: event.Thinking, Text: v.Thinking, Payload: level, Raw: v})
			}
		case *model.Text:
			if v.Text != "" {
				out = append(out, event.Event{Kind: event.Text, Text: v.Text, Payload: level, Raw: v})
			}
		case *model.ToolUse:
			p := map[string]any{"id": v.ID, "input": json.RawMessage(v.Input)}
			for k, x := range level {
				p[k] = x
			}
			out = append(out, event.Event{Kind: event.ToolCall, Tool: v.Name, Text: summary(v.Input), Payload: p, Raw: v})
		}
	}
	u := resp.Usage
	out = append(out, event.Event{Kind: event.Usage,
		Text: fmt.Sprintf("%d in, %d out, %d cached; context %d", u.Input, u.Output, u.CacheRead, context),
		Payload: map[string]any{"context": context, "window": window, "cost": cost, "input": u.Input,
			"output": u.Output, "cache_read": u.CacheRead, "cache_creation": u.CacheCreation}})
	return out
}

// summary is the short form of a tool input shown as "[Tool] summary":
// its most telling field.
func summary(input json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return clip(string(input), 100)
	}
	for _, k := range []string{"file_path", "command", "pattern", "url", "description", "question", "path"} {
		if v, ok := m[k].(string); ok && v != "" {
			return clip(v, 100)
		}
	}
	return clip(string(input), 100)
}

func clip(s string, n int) string {
	r := []rune(strings.ReplaceAll(s, "\n", " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}

func resultPayload(r Result) map[string]any {
	return map[string]any{"session": r.SessionID, "ok": r.OK, "cost": r.Cost, "turns": r.Turns,
		"error": r.Error, "context": r.Context}
}
