package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/flower-run/flower/model"
)

// The request body is written here, not by the SDK's encoder: the SDK
// encodes every message of every request by reflection over its param
// unions, which cost more than anything else in a wake (36–38 % of it,
// issue 12) and again on every call of a long session. Each message is
// encoded once, to the JSON the SDK would send (TestWireMatchesSDK), and
// kept in the conversation's memo; a request copies the kept bytes.

// wire block shapes, in the API's field names.
type (
	wireCache struct {
		Type string `json:"type"`
	}
	wireText struct {
		Type  string     `json:"type"`
		Text  string     `json:"text"`
		Cache *wireCache `json:"cache_control,omitempty"`
	}
	wireThinking struct {
		Type      string `json:"type"`
		Signature string `json:"signature"`
		Thinking  string `json:"thinking"`
	}
	wireRedacted struct {
		Type string `json:"type"`
		Data string `json:"data"`
	}
	wireToolUse struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Input json.RawMessage `json:"input"`
		Name  string          `json:"name"`
		Cache *wireCache      `json:"cache_control,omitempty"`
	}
	wireToolResult struct {
		Type      string     `json:"type"`
		ToolUseID string     `json:"tool_use_id"`
		IsError   bool       `json:"is_error,omitempty"`
		Content   []wireText `json:"content,omitempty"`
		Cache     *wireCache `json:"cache_control,omitempty"`
	}
	wireMessageParam struct {
		Content []any  `json:"content"`
		Role    string `json:"role"`
	}
)

var wireEphemeral = &wireCache{Type: "ephemeral"}

// wireMessage is the JSON of the i-th message of a request, with a cache
// breakpoint on its last block that can carry one when mark is set (as
// markLast puts it).
func wireMessage(i int, m model.Message, mark bool) ([]byte, error) {
	out := wireMessageParam{Role: string(model.User), Content: []any{}}
	if m.Role == model.Assistant {
		out.Role = string(model.Assistant)
	}
	marked := -1 // the block that carries the breakpoint
	for _, b := range m.Content {
		w, cacheable, err := wireBlock(b)
		if err != nil {
			return nil, fmt.Errorf("anthropic: message %d: %w", i, err)
		}
		if w == nil {
			continue
		}
		if cacheable {
			marked = len(out.Content)
		}
		out.Content = append(out.Content, w)
	}
	if mark && marked >= 0 {
		switch w := out.Content[marked].(type) {
		case *wireText:
			w.Cache = wireEphemeral
		case *wireToolUse:
			w.Cache = wireEphemeral
		case *wireToolResult:
			w.Cache = wireEphemeral
		}
	}
	return json.Marshal(out)
}

// wireBlock is one block's wire form, nil for one contentBlock drops;
// cacheable reports whether it can carry a cache breakpoint.
func wireBlock(b model.Block) (w any, cacheable bool, err error) {
	switch v := b.(type) {
	case *model.Text:
		if v.Text == "" {
			return nil, false, nil
		}
		return &wireText{Type: "text", Text: v.Text}, true, nil
	case *model.Thinking:
		if v.Redacted != "" {
			return &wireRedacted{Type: "redacted_thinking", Data: v.Redacted}, false, nil
		}
		if v.Signature == "" {
			return nil, false, nil
		}
		return &wireThinking{Type: "thinking", Signature: v.Signature, Thinking: v.Thinking}, false, nil
	case *model.ToolUse:
		input := v.Input
		if len(input) == 0 {
			input = json.RawMessage(`{}`)
		}
		if !json.Valid(input) {
			return nil, false, fmt.Errorf("tool_use %s: input is not JSON", v.ID)
		}
		return &wireToolUse{Type: "tool_use", ID: v.ID, Input: input, Name: v.Name}, true, nil
	case *model.ToolResult:
		r := &wireToolResult{Type: "tool_result", ToolUseID: v.ToolUseID, IsError: v.IsError}
		if v.Content != "" {
			r.Content = []wireText{{Type: "text", Text: v.Content}}
		}
		return r, true, nil
	}
	return nil, false, fmt.Errorf("unknown block %T", b)
}

// body is the request's JSON: params (without messages and tools) encoded
// by the SDK, with the messages and tools spliced in, asking for a stream.
func body(params sdk.MessageNewParams, msgs [][]byte, tools []byte) ([]byte, error) {
	params.Messages, params.Tools = []sdk.MessageParam{}, nil
	head, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encode request: %w", err)
	}
	const key = `"messages":[]`
	at := bytes.Index(head, []byte(key))
	if at < 0 || head[len(head)-1] != '}' {
		return nil, fmt.Errorf("anthropic: encode request: no messages in %s", head)
	}
	n := len(head) + len(tools) + 32
	for _, m := range msgs {
		n += len(m) + 1
	}
	out := make([]byte, 0, n)
	out = append(append(out, `{"stream":true,`...), head[1:at+len(key)-1]...)
	for i, m := range msgs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, m...)
	}
	out = append(out, head[at+len(key)-1:len(head)-1]...)
	if len(tools) > 0 {
		out = append(append(out, `,"tools":`...), tools...)
	}
	return append(out, '}'), nil
}
