package agent

import (
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/view"
)

// request is the next model call over the session's view. The view is
// built once per session load and extended by the entries appended since
// the last call; the tools are listed once per run; the memo lets the
// provider convert only the new messages (issue 12).
func (s *session) request() *model.Request {
	if s.defs == nil {
		s.defs = s.toolDefs()
	}
	return &model.Request{Model: s.spec.Model, System: s.system(), Messages: s.messages(), Tools: s.defs, Memo: s.memo}
}

// messages is the view of s.entries and the results held for the next
// commit: the kept view extended, or a new one when the entries are
// another session's (a handoff, a fork) or the pruning rules changed.
func (s *session) messages() []model.Message {
	o := s.viewOptions()
	if s.view == nil || !s.view.Extends(s.entries) || s.view.Options().Old != o.Old ||
		!s.view.Append(s.entries[s.view.Len():]...) {
		if o.Trim != nil {
			s.rt.listSpills() // which spill files are there, read once for the whole view
		}
		s.view = view.NewBuilder(s.entries, o)
		if o.Trim != nil {
			s.rt.seal() // the spill files the view points at, synced once
		}
	}
	return s.view.Messages(s.unsaved()...)
}
