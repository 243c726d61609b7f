package model

import (
	"encoding/json"
	"fmt"
)

// wireBlock is the stored form of a Block: a "type" tag plus the fields of
// that type. It is the format of store entries; change it only with a
// schema version bump.
type wireBlock struct {
	Type string `json:"type"`
	*Text
	*Thinking
	*ToolUse
	*ToolResult
}

type wireMessage struct {
	Role    Role        `json:"role"`
	Content []wireBlock `json:"content"`
}

// MarshalJSON encodes m with a "type" tag on every block.
func (m Message) MarshalJSON() ([]byte, error) {
	w := wireMessage{Role: m.Role, Content: make([]wireBlock, 0, len(m.Content))}
	for _, b := range m.Content {
		switch v := b.(type) {
		case *Text:
			w.Content = append(w.Content, wireBlock{Type: "text", Text: v})
		case *Thinking:
			w.Content = append(w.Content, wireBlock{Type: "thinking", Thinking: v})
		case *ToolUse:
			w.Content = append(w.Content, wireBlock{Type: "tool_use", ToolUse: v})
		case *ToolResult:
			w.Content = append(w.Content, wireBlock{Type: "tool_result", ToolResult: v})
		default:
			return nil, fmt.Errorf("model: unknown block %T", b)
		}
	}
	return json.Marshal(w)
}

// flatBlock has the fields of every block type, so a message decodes in
// one pass of encoding/json (loading a long session is mostly decoding).
type flatBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Redacted  string          `json:"redacted"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   string          `json:"content"`
	IsError   bool            `json:"is_error"`
}

// UnmarshalJSON decodes what MarshalJSON wrote; an unknown block type is an
// error, never a panic.
func (m *Message) UnmarshalJSON(data []byte) error {
	var w struct {
		Role    Role        `json:"role"`
		Content []flatBlock `json:"content"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	m.Role, m.Content = w.Role, make([]Block, 0, len(w.Content))
	for i := range w.Content {
		b, err := w.Content[i].block()
		if err != nil {
			return err
		}
		m.Content = append(m.Content, b)
	}
	return nil
}

func (f *flatBlock) block() (Block, error) {
	switch f.Type {
	case "text":
		return &Text{Text: f.Text}, nil
	case "thinking":
		return &Thinking{Thinking: f.Thinking, Signature: f.Signature, Redacted: f.Redacted}, nil
	case "tool_use":
		return &ToolUse{ID: f.ID, Name: f.Name, Input: f.Input}, nil
	case "tool_result":
		return &ToolResult{ToolUseID: f.ToolUseID, Content: f.Content, IsError: f.IsError}, nil
	}
	return nil, fmt.Errorf("model: unknown block type %q", f.Type)
}
