package human

import "context"

// permitPrefix keys a permission question by its tool call in the
// journal, apart from the model's own asks.
const permitPrefix = "permit:"

// AskPermission asks the person whether the tool call call may run (an
// ask rule of flower.yaml matched it, R9.3), with options to pick from.
// It is an ask like the model's own: it waits as long as the channel's
// timeout, counts against the question cap, and settles at once when no
// one watches (unattended), and its settlement is journaled, so that the
// same call run again after a crash gets the same answer without asking.
// It returns the answer and the state the question settled in
// ("answered", "timeout", "declined", "over_budget"); err is ctx's when
// the run was cancelled while it waited.
func (c *Channel) AskPermission(ctx context.Context, call, question string, options []string) (answer, state string, err error) {
	key := permitPrefix + call
	if s, ok := c.settledFor(key); ok {
		return s.text, string(s.state), nil
	}
	w, early := c.admit(parseQuestionText(question, options))
	if early != nil {
		c.settle(key, w.Ask, *early)
		return "", string(early.state), nil
	}
	w.call = key
	if err := c.journal.put(record{Type: "ask", Call: key, Ask: &w.Ask}); err != nil {
		c.emitError("keep the ask", err)
	}
	s, err := c.wait(ctx, w)
	c.settle(key, w.Ask, s)
	if err != nil {
		return "", string(s.state), err
	}
	return s.text, string(s.state), nil
}

func parseQuestionText(text string, options []string) question {
	return question{text: text, options: append([]string(nil), options...)}
}
