package view

import (
	"encoding/json"

	"github.com/flower-run/flower/model"
)

// repair enforces the request invariants on merged messages.
func repair(msgs []model.Message) []model.Message {
	var r repairer
	for _, m := range msgs {
		r.feed(m)
	}
	r.finish()
	return r.out
}

// repairer is repair one message at a time, so that a view kept between
// model calls repairs each message once (see Builder).
type repairer struct {
	out  []model.Message
	open []*model.ToolUse // calls of the last assistant message still unanswered
}

func (r *repairer) feed(m model.Message) {
	if m.Role == model.Assistant {
		if len(r.open) > 0 {
			r.out = appendMerged(r.out, answers(r.open, nil))
		}
		m = cleanAssistant(m)
		r.open = m.ToolUses()
	} else {
		m = cleanUser(m, r.open)
		r.open = nil
	}
	if len(m.Content) == 0 {
		return
	}
	if len(r.out) == 0 && m.Role == model.Assistant {
		r.out = append(r.out, model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: "(continued)"}}})
	}
	r.out = appendMerged(r.out, m)
}

// finish answers the calls left open at the end.
func (r *repairer) finish() {
	if len(r.open) > 0 {
		r.out = appendMerged(r.out, answers(r.open, nil))
		r.open = nil
	}
}

// cleanAssistant drops empty text blocks and gives every tool call valid
// JSON input, so a call the model malformed can still be sent back.
func cleanAssistant(m model.Message) model.Message {
	var c []model.Block
	for _, b := range m.Content {
		switch v := b.(type) {
		case *model.Text:
			if v.Text == "" {
				continue
			}
		case *model.ToolUse:
			if !json.Valid(v.Input) {
				fixed := *v
				fixed.Input = json.RawMessage(`{}`)
				b = &fixed
			}
		}
		c = append(c, b)
	}
	return model.Message{Role: model.Assistant, Content: c}
}

// cleanUser puts the results of the open calls first, in call order, with a
// neutral text for any call left unanswered, drops results that answer no
// open call, and keeps the non-empty text after them.
func cleanUser(m model.Message, open []*model.ToolUse) model.Message {
	results := map[string]*model.ToolResult{}
	var rest []model.Block
	for _, b := range m.Content {
		switch v := b.(type) {
		case *model.ToolResult:
			if _, seen := results[v.ToolUseID]; !seen {
				results[v.ToolUseID] = v
			}
		case *model.Text:
			if v.Text != "" {
				rest = append(rest, v)
			}
		case *model.ToolUse, *model.Thinking:
			// never valid in a user message
		default:
			rest = append(rest, b)
		}
	}
	out := answers(open, results)
	out.Content = append(out.Content, rest...)
	return out
}

// answers is a user message answering each call, from results when present.
func answers(open []*model.ToolUse, results map[string]*model.ToolResult) model.Message {
	m := model.Message{Role: model.User}
	for _, u := range open {
		if r, ok := results[u.ID]; ok {
			m.Content = append(m.Content, r)
			continue
		}
		m.Content = append(m.Content, &model.ToolResult{ToolUseID: u.ID, Content: Interrupted, IsError: true})
	}
	return m
}
