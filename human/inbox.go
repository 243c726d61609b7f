package human

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/tool"
)

// InboxEmptyText is the inbox's answer when nothing came: said plainly, so
// the model carries on instead of waiting or checking again at once.
const InboxEmptyText = "The inbox is empty: the person has sent nothing since you last checked. Carry on with your work."

// Send delivers text from the person to the agent without interrupting it.
// The text is queued for the inbox tool, appended to the amend file (the
// brief) so steps that start later see it too, and announced as an ask
// event with payload["kind"] = "mail". Blank text is ignored.
func (c *Channel) Send(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	m := mail{id: uuid.NewString(), at: c.clock.Now(), text: text}
	// Durable before anything else: mail is never lost to a crash.
	if err := c.journal.put(record{Type: "mail", ID: m.id, Text: text, At: m.at}); err != nil {
		c.emitError("keep the mail", err)
	}
	c.mu.Lock()
	c.inbox = append(c.inbox, m)
	c.mailIDs[m.id] = true
	c.mu.Unlock()
	if err := c.appendAmend(m); err != nil {
		c.emitError("amend the brief", err)
	}
	c.emit(event.Event{Kind: event.Ask, Text: text, Payload: map[string]any{
		"kind": "mail", "text": text, "at": m.at.Format(time.RFC3339),
	}})
}

// readInbox returns the mail of the inbox call call: what it read before a
// crash, else the inbox, emptied, oldest first. A first read is journaled
// under the call.
func (c *Channel) readInbox(call string) []mail {
	c.mu.Lock()
	if ms, ok := c.reads[call]; ok && call != "" {
		c.mu.Unlock()
		return ms
	}
	ms := c.inbox
	c.inbox = nil
	if call != "" {
		c.reads[call] = ms
	}
	c.mu.Unlock()
	if len(ms) > 0 && call != "" {
		ids := make([]string, len(ms))
		for i, m := range ms {
			ids[i] = m.id
		}
		if err := c.journal.put(record{Type: "read", Call: call, Mails: ids}); err != nil {
			c.emitError("keep the inbox read", err)
		}
	}
	return ms
}

type inboxTool struct{ c *Channel }

var _ tool.Tool = (*inboxTool)(nil)

func (*inboxTool) Name() string { return InboxName }

// Class is Pure: reading the inbox changes nothing in the world, and mail
// already read on a call cut by a crash is also in the brief.
func (*inboxTool) Class() tool.Class { return tool.Pure }

func (*inboxTool) Description() string {
	return `Returns the messages the person sent you since you last checked. Never waits.

- The person may add to or change the task while you work, without being asked. Check the inbox between pieces of work: after finishing one part and before starting the next, and before you report that you are done.
- What the person says here outranks your earlier plan; adjust the work to it. Each message is also appended to the brief, so later steps see it too.
- When nothing came, it says the inbox is empty: carry on, do not wait for mail.`
}

func (*inboxTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type": "object", "properties": {}}`)
}

func (t *inboxTool) Run(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Content: formatInbox(t.c.readInbox(tool.CallID(ctx)))}, nil
}

func formatInbox(ms []mail) string {
	if len(ms) == 0 {
		return InboxEmptyText
	}
	var b strings.Builder
	noun := "messages"
	if len(ms) == 1 {
		noun = "message"
	}
	fmt.Fprintf(&b, "%d %s from the person since you last checked (also appended to the brief):\n", len(ms), noun)
	for _, m := range ms {
		fmt.Fprintf(&b, "\n[%s]\n%s\n", m.at.Format(time.DateTime), m.text)
	}
	return b.String()
}
