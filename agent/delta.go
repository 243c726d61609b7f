package agent

import (
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model"
)

// deltas streams the text and reasoning of a model call to the sink as
// they arrive (issue 11), numbered by the call's attempt. They are never
// stored: the response is committed whole, and its Text and Thinking
// events follow.
func (s *session) deltas(attempt int) func(model.Delta) {
	if s.opts.Sink == nil {
		return nil
	}
	return func(d model.Delta) {
		if d.Text == "" {
			return
		}
		p := map[string]any{"attempt": attempt}
		if d.Thinking {
			p["thinking"] = true
		}
		s.emit(event.Event{Kind: event.Delta, Text: d.Text, Payload: p})
	}
}
