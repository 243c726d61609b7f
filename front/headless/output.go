package headless

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
)

// translator turns one run's events into Claude Code's lines: system/init
// before anything else, one assistant line per model message (its blocks
// gathered until the message's usage event), one user line per tool
// result, and the result line last.
type translator struct {
	s     *Session
	start time.Time

	mu        sync.Mutex // guards everything below: the sink may be called from any goroutine
	inited    bool
	blocks    []map[string]any
	inputs    map[string]json.RawMessage // tool call id → input, for permission_denials
	usage     usage
	apiTime   time.Duration
	since     time.Time // the end of the last model message or tool result
	denials   []map[string]any
	lastModel string
}

// usage is Claude Code's usage object, summed over a run's responses.
type usage struct {
	Input         int `json:"input_tokens"`
	CacheCreation int `json:"cache_creation_input_tokens"`
	CacheRead     int `json:"cache_read_input_tokens"`
	Output        int `json:"output_tokens"`
}

func newTranslator(s *Session, now time.Time) *translator {
	return &translator{s: s, start: now, since: now, inputs: map[string]json.RawMessage{}}
}

func (t *translator) streaming() bool { return t.s.o.Format == FormatStreamJSON }

// sink receives the run's events.
func (t *translator) sink(e event.Event) {
	if _, sub := e.Payload["subagent"]; sub {
		return // a subagent's messages are its own conversation, not the host's
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e.Kind {
	case event.Init:
		if sid, _ := e.Payload["session"].(string); sid != "" {
			t.s.mu.Lock()
			t.s.session = sid
			t.s.mu.Unlock()
		}
		t.init()
	case event.Text:
		t.blocks = append(t.blocks, map[string]any{"type": "text", "text": e.Text})
	case event.Thinking:
		t.blocks = append(t.blocks, map[string]any{"type": "thinking", "thinking": e.Text, "signature": ""})
	case event.ToolCall:
		id, _ := e.Payload["id"].(string)
		in, _ := e.Payload["input"].(json.RawMessage)
		if len(in) == 0 {
			in = json.RawMessage("{}")
		}
		t.inputs[id] = in
		t.blocks = append(t.blocks, map[string]any{"type": "tool_use", "id": id, "name": e.Tool, "input": in})
	case event.Usage:
		t.message(e.Payload)
	case event.ToolResult, event.Denied:
		t.toolResult(e)
	}
}

// init writes system/init once per run, before any other line of it.
func (t *translator) init() {
	if t.inited {
		return
	}
	t.inited = true
	if !t.streaming() {
		return
	}
	in := t.s.o.Init
	mcp := make([]map[string]any, 0, len(in.MCPServers))
	for _, name := range in.MCPServers {
		mcp = append(mcp, map[string]any{"name": name, "status": "connected"})
	}
	t.s.out.write(map[string]any{"type": "system", "subtype": "init", "session_id": t.s.sessionID(), "uuid": newUUID(),
		"cwd": in.Cwd, "model": in.Model, "tools": nonNil(in.Tools), "mcp_servers": mcp,
		"permissionMode": string(t.s.o.Gate.Mode()), "apiKeySource": in.APIKeySource,
		"slash_commands": nonNil(in.SlashCommands), "output_style": "default", "skills": []string{}, "plugins": []any{},
		"claude_code_version": in.Version, "agents": []string{}})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// message writes the assistant line of the blocks gathered so far; p is
// the message's usage event payload.
func (t *translator) message(p map[string]any) {
	now := t.s.o.Now()
	t.apiTime += now.Sub(t.since)
	t.since = now
	u := usage{Input: num(p["input"]), Output: num(p["output"]), CacheRead: num(p["cache_read"]), CacheCreation: num(p["cache_creation"])}
	t.usage.Input += u.Input
	t.usage.Output += u.Output
	t.usage.CacheRead += u.CacheRead
	t.usage.CacheCreation += u.CacheCreation
	blocks := t.blocks
	t.blocks = nil
	if !t.streaming() || len(blocks) == 0 {
		return
	}
	t.init()
	stop := "end_turn"
	for _, b := range blocks {
		if b["type"] == "tool_use" {
			stop = "tool_use"
		}
	}
	t.lastModel = stop
	t.s.out.write(map[string]any{"type": "assistant", "uuid": newUUID(), "session_id": t.s.sessionID(), "parent_tool_use_id": nil,
		"message": map[string]any{"id": "msg_" + newUUID(), "type": "message", "role": "assistant", "model": t.s.o.Init.Model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": u}})
}

// toolResult writes the user line of one tool's result.
func (t *translator) toolResult(e event.Event) {
	t.since = t.s.o.Now()
	id, _ := e.Payload["id"].(string)
	isErr, _ := e.Payload["is_error"].(bool)
	if e.Kind == event.Denied {
		t.denials = append(t.denials, map[string]any{"tool_name": e.Tool, "tool_use_id": id, "tool_input": t.inputs[id]})
	}
	if !t.streaming() {
		return
	}
	t.init()
	t.s.out.write(map[string]any{"type": "user", "uuid": newUUID(), "session_id": t.s.sessionID(), "parent_tool_use_id": nil,
		"message": map[string]any{"role": "user", "content": []map[string]any{
			{"type": "tool_result", "tool_use_id": id, "content": e.Text, "is_error": isErr}}},
		"tool_use_result": e.Text})
}

func num(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}

// finish writes the end of the run: the result line (stream-json, json)
// or the result's text (text).
func (t *translator) finish(res agent.Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.s.o.Format == FormatText {
		if res.Text != "" {
			t.s.out.text(res.Text)
		}
		return
	}
	t.init() // a run that failed before its first message still says init first
	t.s.out.write(t.result(res))
}

// result is Claude Code's result object for res.
func (t *translator) result(res agent.Result) map[string]any {
	sub, stop := "success", any(nil)
	errs := []string{}
	switch {
	case res.OK:
		stop = "end_turn"
	case res.Stop == agent.StopMaxTurns:
		sub, stop = "error_max_turns", "tool_use"
		errs = append(errs, res.Error)
	case res.Stop == agent.StopBudget:
		sub = "error_max_budget_usd"
		errs = append(errs, res.Error)
	default:
		sub = "error_during_execution"
		errs = append(errs, res.Error)
	}
	end := res.End
	if end.IsZero() {
		end = t.s.o.Now()
	}
	model := t.s.o.Init.Model
	denials := t.denials
	if denials == nil {
		denials = []map[string]any{}
	}
	out := map[string]any{"type": "result", "subtype": sub, "is_error": !res.OK, "uuid": newUUID(),
		"duration_ms": end.Sub(t.start).Milliseconds(), "duration_api_ms": t.apiTime.Milliseconds(),
		"num_turns": res.Turns, "result": res.Text, "stop_reason": stop, "session_id": t.s.sessionID(),
		"total_cost_usd": res.Cost, "usage": t.usage, "permission_denials": denials,
		"modelUsage": map[string]any{model: map[string]any{"inputTokens": t.usage.Input, "outputTokens": t.usage.Output,
			"cacheReadInputTokens": t.usage.CacheRead, "cacheCreationInputTokens": t.usage.CacheCreation,
			"webSearchRequests": 0, "costUSD": res.Cost, "contextWindow": 0, "maxOutputTokens": 0}}}
	if !res.OK {
		out["errors"] = errs
	}
	if v, ok := lastJSON(res.Text); ok && t.s.o.Structured {
		out["structured_output"] = v
	}
	if res.Stop == agent.StopInterrupted {
		out["terminal_reason"] = "aborted_tools"
	}
	return out
}

// lastJSON is the JSON value that ends text, if one does.
func lastJSON(text string) (any, bool) {
	text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(text), "```"))
	for i := len(text) - 1; i >= 0; i-- {
		if text[i] != '{' && text[i] != '[' {
			continue
		}
		var v any
		if json.Unmarshal([]byte(text[i:]), &v) == nil {
			return v, true
		}
	}
	return nil, false
}
