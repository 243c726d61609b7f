// Package model is the provider-neutral shape of a conversation with an LLM:
// messages made of content blocks, a request, a streamed response with its
// usage, and the Provider interface the agent loop consumes. Adapters in
// model/anthropic and model/openai translate to the official SDKs; SDK types
// never leave those packages.
package model

import (
	"bytes"
	"context"
	"encoding/json"
)

// Role is who spoke a message.
type Role string

// Roles of a conversation. Tool results travel in user messages, as the
// Anthropic API wants; the OpenAI adapter splits them into tool messages.
const (
	User      Role = "user"
	Assistant Role = "assistant"
)

// Block is one piece of a message: a sealed sum type of *Text, *Thinking,
// *ToolUse and *ToolResult.
type Block interface{ isBlock() }

// Text is plain text.
type Text struct {
	Text string `json:"text"`
}

// Thinking is model reasoning; Signature must round-trip unchanged.
type Thinking struct {
	Thinking  string `json:"thinking"`
	Signature string `json:"signature,omitempty"`
	Redacted  string `json:"redacted,omitempty"` // opaque data of a redacted_thinking block
}

// ToolUse is the model asking for a tool. Input is the raw JSON it sent.
type ToolUse struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ToolResult answers a ToolUse by its ID.
type ToolResult struct {
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

func (*Text) isBlock()       {}
func (*Thinking) isBlock()   {}
func (*ToolUse) isBlock()    {}
func (*ToolResult) isBlock() {}

// Message is one turn of the conversation.
type Message struct {
	Role    Role
	Content []Block
}

// ToolUses returns the tool calls in m, in order.
func (m Message) ToolUses() []*ToolUse {
	var out []*ToolUse
	for _, b := range m.Content {
		if u, ok := b.(*ToolUse); ok {
			out = append(out, u)
		}
	}
	return out
}

// TextOf returns the concatenated text blocks of m.
func (m Message) TextOf() string {
	s := ""
	for _, b := range m.Content {
		if t, ok := b.(*Text); ok {
			s += t.Text
		}
	}
	return s
}

// ToolDef describes a tool offered to the model. Schema is a JSON Schema
// object for the input.
type ToolDef struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// Request is one model call.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolDef
	MaxTokens int
	// Memo, when set, is the conversation's memo: the provider may keep in
	// it what it converted, and convert only what changed on the next call.
	Memo *Memo
}

// Stop reasons, normalized across providers.
const (
	StopEnd       = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
	StopRefusal   = "refusal"
)

// Usage counts the tokens of one response. Input counts only uncached input.
type Usage struct {
	Input         int `json:"input"`
	Output        int `json:"output"`
	CacheRead     int `json:"cache_read,omitempty"`
	CacheCreation int `json:"cache_creation,omitempty"`
}

// Context is the size of the context the model saw: input plus cache read
// plus cache creation tokens (R2.6).
func (u Usage) Context() int { return u.Input + u.CacheRead + u.CacheCreation }

// Response is a complete model answer.
type Response struct {
	ID         string
	Model      string
	Message    Message // Role is always Assistant
	StopReason string
	Usage      Usage
}

// Delta is a piece of a response as it streams in.
type Delta struct {
	Thinking bool // the text is reasoning, not an answer
	Text     string
}

// Provider calls a model. Stream sends deltas to on (which may be nil) as
// they arrive and returns the whole response, or the provider's error.
// Providers never retry: retrying is the runtime's job.
type Provider interface {
	Stream(ctx context.Context, req *Request, on func(Delta)) (*Response, error)
}

// SameTools reports whether a and b offer the same tools, in the same
// order: the adapters' memos keep a run's converted tools while it does.
func SameTools(a, b []ToolDef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].Schema, b[i].Schema) {
			return false
		}
	}
	return true
}
