package agent

import (
	"context"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/store"
)

// Mailbox holds what the person sent a running agent (R10.3). The loop
// delivers it at the next message boundary, so a note reaches a model
// that never checks its inbox.
type Mailbox interface {
	// Deliver takes the mail the model has not read yet. text is the
	// person's message ("" when nothing waits); mark are entries, under
	// keys other than the session's, that record the mail delivered;
	// undo puts the mail back when the commit that carries both fails.
	Deliver() (text string, mark []store.Entry, undo func())
}

// deliverMail appends the person's unread mail to the session as their
// next message, before the request that carries it. The message and the
// record that it was delivered are one commit: a crash either leaves
// both, and the mail is in the session and delivered no more, or
// neither, and it is still unread. Only top-level runs allowed the
// mailbox's tool (the inbox: steps that take the person's word) get mail;
// for the others it waits, so a note typed during the judge reaches the
// next work round. It reports whether it delivered anything.
func (s *session) deliverMail(ctx context.Context) (bool, error) {
	mb := s.rt.mail
	if mb == nil || !s.top || !s.mayUse(s.rt.mailTool) {
		return false, nil
	}
	text, mark, undo := mb.Deliver()
	if text == "" {
		return false, nil
	}
	if err := s.appendWith(ctx, store.Batch{Entries: mark}, userText(text)); err != nil {
		if undo != nil {
			undo()
		}
		return false, err
	}
	s.emit(event.Event{Kind: event.Ask, Text: text, Payload: map[string]any{"kind": "mail_delivered", "session": s.id}})
	return true, nil
}

// mayUse reports whether the session may call the registered tool name.
func (s *session) mayUse(name string) bool {
	if _, ok := s.rt.tools[name]; !ok {
		return false
	}
	return s.allowed == nil || s.allowed[name]
}
