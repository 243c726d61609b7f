package view

import (
	"errors"
	"fmt"

	"github.com/flower-run/flower/model"
)

// Check reports the first way msgs would be an invalid request: a first
// message not from the user, roles not alternating, an empty message or
// text, a tool call left unanswered, or a result answering no call.
func Check(msgs []model.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	if msgs[0].Role != model.User {
		return errors.New("first message is not from the user")
	}
	var open []*model.ToolUse
	for i, m := range msgs {
		if i > 0 && msgs[i-1].Role == m.Role {
			return fmt.Errorf("message %d: two %s messages in a row", i, m.Role)
		}
		if len(m.Content) == 0 {
			return fmt.Errorf("message %d: empty", i)
		}
		if err := checkBlocks(i, m, open); err != nil {
			return err
		}
		open = nil
		if m.Role == model.Assistant {
			open = m.ToolUses()
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("last message: tool call %s unanswered", open[0].ID)
	}
	return nil
}

func checkBlocks(i int, m model.Message, open []*model.ToolUse) error {
	answered := map[string]bool{}
	for _, b := range m.Content {
		switch v := b.(type) {
		case *model.Text:
			if v.Text == "" {
				return fmt.Errorf("message %d: empty text block", i)
			}
		case *model.ToolResult:
			if m.Role != model.User {
				return fmt.Errorf("message %d: tool result from the assistant", i)
			}
			answered[v.ToolUseID] = true
		case *model.ToolUse:
			if m.Role != model.Assistant {
				return fmt.Errorf("message %d: tool call from the user", i)
			}
		}
	}
	for _, u := range open {
		if !answered[u.ID] {
			return fmt.Errorf("message %d: tool call %s unanswered", i, u.ID)
		}
	}
	if len(answered) > len(open) {
		return fmt.Errorf("message %d: a tool result answers no call", i)
	}
	return nil
}
