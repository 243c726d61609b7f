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

// UnmarshalJSON decodes what MarshalJSON wrote; an unknown block type is an
// error, never a panic.
func (m *Message) UnmarshalJSON(data []byte) error {
	var w struct {
		Role    Role              `json:"role"`
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	m.Role, m.Content = w.Role, nil
	for _, raw := range w.Content {
		b, err := decodeBlock(raw)
		if err != nil {
			return err
		}
		m.Content = append(m.Content, b)
	}
	return nil
}

func decodeBlock(raw json.RawMessage) (Block, error) {
	var tag struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &tag); err != nil {
		return nil, err
	}
	var b Block
	switch tag.Type {
	case "text":
		b = &Text{}
	case "thinking":
		b = &Thinking{}
	case "tool_use":
		b = &ToolUse{}
	case "tool_result":
		b = &ToolResult{}
	default:
		return nil, fmt.Errorf("model: unknown block type %q", tag.Type)
	}
	if err := json.Unmarshal(raw, b); err != nil {
		return nil, fmt.Errorf("decode %s block: %w", tag.Type, err)
	}
	return b, nil
}
