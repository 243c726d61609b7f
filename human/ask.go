package human

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/tool"
)

// Tool names as the model sees them.
const (
	AskName   = "ask"
	InboxName = "inbox"
)

// The fixed results of questions the person did not answer. They tell the
// model to go on by itself and leave a trace in the brief, so an
// unattended run neither hangs nor loses what it had to guess (R6.4).
const (
	DeclinedText   = `The person declined to answer. Do not ask it again: continue on your own judgement, and write this question and the assumption you made under "Unknowns and assumptions" in the brief.`
	TimeoutText    = `No one answered. Continue on your own judgement, and write this question and the assumption you made under "Unknowns and assumptions" in the brief. Do not ask it again, and do not stop here.`
	OverBudgetText = `Not asked: no more questions to the person are allowed in this run. Continue on your own judgement, and write this question and the assumption you made under "Unknowns and assumptions" in the brief. Do not stop here.`
	emptyText      = `The person answered with an empty reply. Continue on your own judgement, and write this question and the assumption you made under "Unknowns and assumptions" in the brief. Do not ask it again.`
)

// replies are a channel's fixed replies (Options.TimeoutText...).
type replies struct{ timeout, overBudget, declined string }

func (r *replies) fill() {
	if r.timeout == "" {
		r.timeout = TimeoutText
	}
	if r.overBudget == "" {
		r.overBudget = OverBudgetText
	}
	if r.declined == "" {
		r.declined = DeclinedText
	}
}

// cancelledReason is the decline reason of an ask whose run was cancelled
// while it waited.
const cancelledReason = "the run was cancelled"

// Tools returns the two tools the model sees: ask and inbox.
func (c *Channel) Tools() []tool.Tool {
	return []tool.Tool{&askTool{c}, &inboxTool{c}}
}

type askTool struct{ c *Channel }

var _ tool.Tool = (*askTool)(nil)

func (*askTool) Name() string { return AskName }

// Class is Pure: asking changes nothing in the world, and a call cut by a
// crash is simply asked again on resume. Settled asks are still appended
// to the Q&A log, which is a record, not an effect the run depends on.
func (*askTool) Class() tool.Class { return tool.Pure }

// KeepResult is true: an answer is a person's time, so it is durable as
// soon as it arrives instead of riding with the turn's next commit.
func (*askTool) KeepResult() bool { return true }

func (*askTool) Description() string {
	return `Asks the person who gave you this task one question, and waits for the answer.

- Ask only when the answer changes the work and you cannot find it yourself: look in the workspace, the brief and the notes first.
- Never ask what you can decide yourself (naming, layout, tools, a sensible default) and never ask for permission to do what the task already asks. Decide, and write the assumption under "Unknowns and assumptions" in the brief.
- Prefer options: give 2 to 5 short, distinct choices, the one you recommend first. The person may still answer in their own words.
- One question per call, self-contained: the person may not have followed your work. Say in a few words what depends on the answer.
- The call waits until the person answers or declines, or a time limit passes. The person may be absent or the number of questions capped: then the result says so at once. In every case without an answer, go on by your own judgement and do not ask the same question again.
- Questions and answers are kept in notes/qa.md. To read what the person sent without being asked, use inbox.`
}

func (*askTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "question": {"type": "string", "description": "The question, self-contained, with what depends on the answer."},
    "options": {"type": "array", "items": {"type": "string"}, "description": "Short choices the person can pick from, recommended first. Optional; the person may still answer freely."}
  },
  "required": ["question"]
}`)
}

// Run asks and waits. A cancelled ctx settles the ask as declined ("the run
// was cancelled"), removes it from Pending and returns ctx's error: the
// runtime, not the model, handles a cancelled call. If the person answered
// at the same instant, the answer wins and is returned as a result.
func (t *askTool) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	call := tool.CallID(ctx)
	if s, ok := t.c.settledFor(call); ok {
		return t.c.texts.result(s), nil // settled before a crash cut the call: never asked twice
	}
	q := parseQuestion(input)
	w, early := t.c.admit(q)
	if early != nil {
		return t.c.settle(call, w.Ask, *early), nil
	}
	w.call = call
	if err := t.c.journal.put(record{Type: "ask", Call: call, Ask: &w.Ask}); err != nil {
		t.c.emitError("keep the ask", err)
	}
	s, err := t.c.wait(ctx, w)
	res := t.c.settle(call, w.Ask, s)
	if err != nil {
		return tool.Result{}, err
	}
	return res, nil
}

// settledFor is how the call call settled, if it did before.
func (c *Channel) settledFor(call string) (settlement, bool) {
	if call == "" {
		return settlement{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.settledBy[call]
	return s, ok
}

// question is the model's input, or what is wrong with it.
type question struct {
	text    string
	options []string
	problem string
}

func parseQuestion(input json.RawMessage) question {
	var in struct {
		Question string   `json:"question"`
		Options  []string `json:"options"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return question{problem: fmt.Sprintf(`ask: input must be {"question": string, "options": [string]}: %v`, err)}
	}
	q := question{text: strings.TrimSpace(in.Question)}
	for _, o := range in.Options {
		if o = strings.TrimSpace(o); o != "" {
			q.options = append(q.options, o)
		}
	}
	if q.text == "" {
		q.problem = "ask: the question is empty; write the question you need answered."
	}
	return q
}

// admit gives the question an id and decides whether it waits. Questions
// that settle at once (invalid, over budget, unattended) are returned with
// their settlement and never enter Pending, so nothing ever waits on them.
func (c *Channel) admit(q question) (*waiting, *settlement) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	w := &waiting{
		Ask: Ask{ID: fmt.Sprintf("q%d", c.seq), Question: q.text, Options: q.options, Asked: c.clock.Now(), State: Asked},
		seq: c.seq, done: make(chan settlement, 1),
	}
	switch {
	case q.problem != "":
		return w, &settlement{state: Invalid, text: q.problem}
	case c.maxAsks >= 0 && c.asked >= c.maxAsks:
		return w, &settlement{state: OverBudget}
	}
	c.asked++
	if c.timeout <= 0 {
		return w, &settlement{state: Timeout}
	}
	return w, nil
}

// wait puts w in Pending, announces it and blocks until it settles. The
// timer starts before w becomes visible, so a front end that sees it can
// rely on the timeout already running.
func (c *Channel) wait(ctx context.Context, w *waiting) (settlement, error) {
	var expired <-chan time.Time // nil: Forever, never fires
	if c.timeout != Forever {
		expired = c.clock.After(c.timeout)
	}
	c.register(w)
	c.emit(w.Ask.Event(c.remaining()))
	select {
	case s := <-w.done:
		return s, nil
	case <-expired:
		s, _ := c.withdraw(w, settlement{state: Timeout})
		return s, nil
	case <-ctx.Done():
		s, won := c.withdraw(w, settlement{state: Declined, text: cancelledReason})
		if !won {
			return s, nil
		}
		return s, fmt.Errorf("ask %s: %w", w.ID, ctx.Err())
	}
}

// register adds w to pending in seq order: two asks admitted in one order
// may reach register in the other. An answer that came through the store
// before the call asked (inbound.go) settles it at once instead: checked
// under the lock that Follow delivers under, so none slips between.
func (c *Channel) register(w *waiting) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.early[w.call]; ok && w.call != "" {
		delete(c.early, w.call)
		w.done <- s
		return
	}
	i := slices.IndexFunc(c.pending, func(p *waiting) bool { return p.seq > w.seq })
	if i < 0 {
		i = len(c.pending)
	}
	c.pending = slices.Insert(c.pending, i, w)
	close(c.arrived) // wake every NextAsk
	c.arrived = make(chan struct{})
}

// withdraw settles w as s if it is still pending (won = true). Otherwise
// Answer or Decline got there first and its settlement is already in
// w.done, which withdraw returns.
func (c *Channel) withdraw(w *waiting, s settlement) (_ settlement, won bool) {
	won = c.resolve(w.ID, s)
	return <-w.done, won
}

// settle reports a settled ask (event, Q&A log) and turns it into the
// result the model sees.
func (c *Channel) settle(call string, a Ask, s settlement) tool.Result {
	a.Settled, a.State, a.Answer = c.clock.Now(), s.state, s.text
	if call != "" && !(s.state == Declined && s.text == cancelledReason) {
		// Durable before the model sees it: a crash before the result is
		// stored answers the call again with this, without asking.
		if !s.kept { // else journaled when the person gave it (resolve)
			if err := c.journal.put(record{Type: "settled", Call: call, State: s.state, Answer: s.text}); err != nil {
				c.emitError("keep the answer", err)
			}
		}
		c.mu.Lock()
		c.settledBy[call] = s
		c.mu.Unlock()
	} else if call != "" {
		// Cut, not settled: the call is asked again if it runs again. Said
		// in the journal so that a view of it (Remote) no longer lists it.
		if err := c.journal.put(record{Type: "withdrawn", Call: call}); err != nil {
			c.emitError("keep the withdrawal", err)
		}
	}
	waited := a.Settled.Sub(a.Asked)
	c.emit(a.Event(c.remaining()))
	if err := c.appendQA(a, s, waited); err != nil {
		c.emitError("write Q&A log", err)
	}
	return c.texts.result(s)
}

func (r replies) result(s settlement) tool.Result {
	switch s.state {
	case Answered:
		if strings.TrimSpace(s.text) == "" {
			return tool.Result{Content: emptyText}
		}
		return tool.Result{Content: "The person answered:\n\n" + s.text}
	case Declined:
		if why := strings.TrimSpace(s.text); why != "" {
			return tool.Result{Content: r.declined + "\n\nTheir reason: " + why}
		}
		return tool.Result{Content: r.declined}
	case OverBudget:
		return tool.Result{Content: r.overBudget}
	case Invalid:
		return tool.Result{Content: s.text, IsError: true}
	default:
		return tool.Result{Content: r.timeout}
	}
}

// Event is the ask's event as it stands (seed 004's Ask.event): asked, or
// settled with its answer (or the reason of a decline) and how long it
// waited. remaining is how many more questions the channel allows, -1
// without a limit; a UI can say "2 questions left". The event carries
// copies of the options, in Raw and in the payload: a consumer may keep
// or change them.
func (a Ask) Event(remaining int) event.Event {
	a.Options = slices.Clone(a.Options)
	p := map[string]any{
		"kind": "question", "id": a.ID, "question": a.Question,
		"options": options(a.Options), "state": string(a.State), "remaining": remaining,
	}
	if a.State == Asked {
		return event.Event{Kind: event.Ask, Text: a.Question, Raw: a, Payload: p}
	}
	p["answer"], p["waited_s"] = "", a.WaitedS(a.Settled)
	text := a.ID + " " + string(a.State)
	switch a.State {
	case Answered:
		p["answer"] = a.Answer
		text += ": " + a.Answer
	case Declined, Invalid:
		p["reason"] = a.Answer
		if a.Answer != "" {
			text += ": " + a.Answer
		}
	}
	return event.Event{Kind: event.Ask, Text: text, Raw: a, Payload: p}
}

// remaining is how many more questions c allows, -1 without a limit.
func (c *Channel) remaining() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.maxAsks < 0 {
		return -1
	}
	return max(c.maxAsks-c.asked, 0)
}

// options copies the options for a payload, as a JSON array, never null.
func options(s []string) []string {
	return append([]string{}, s...)
}
