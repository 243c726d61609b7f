package human

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/flower-run/flower/store"
)

// DeliveredHeader opens mail the runtime delivers without the model having
// asked: the model must know it is the person speaking, not the tool.
const DeliveredHeader = "[The person sent you this while you worked. It is not a tool result; it is also appended to the brief.]"

// Deliver takes the mail the model has not read, for the agent loop to
// deliver at the next message boundary (R10.3; it implements
// agent.Mailbox). mark is the journal record that the mail was read,
// which the caller commits in the same transaction as the message that
// carries it: after a crash, Restore then finds it read exactly when the
// model's session holds it. undo puts it back when that commit fails.
func (c *Channel) Deliver() (text string, mark []store.Entry, undo func()) {
	c.mu.Lock()
	ms := c.inbox
	c.inbox = nil
	c.mu.Unlock()
	if len(ms) == 0 {
		return "", nil, nil
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.id
	}
	if c.journal != nil {
		e, err := c.journal.entry(record{Type: "read", Call: "delivered:" + uuid.NewString(), Mails: ids})
		if err != nil {
			c.putBack(ms)
			c.emitError("mark the mail delivered", err)
			return "", nil, nil
		}
		mark = []store.Entry{e}
	}
	return formatDelivered(ms), mark, func() { c.putBack(ms) }
}

// Waiting reports whether mail waits for Deliver: a front end can tell a
// note it sent has reached the inbox and not yet the agent.
func (c *Channel) Waiting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inbox) > 0
}

// putBack returns undelivered mail to the front of the inbox.
func (c *Channel) putBack(ms []mail) {
	c.mu.Lock()
	c.inbox = append(ms, c.inbox...)
	c.mu.Unlock()
}

// entry is the store entry of a journal record, for a caller that
// commits it with its own.
func (j *journal) entry(r record) (store.Entry, error) {
	text, err := json.Marshal(r)
	if err != nil {
		return store.Entry{}, err
	}
	return store.Entry{UUID: uuid.NewString(), Key: j.key, Kind: store.KindNote, Time: time.Now(), Text: string(text)}, nil
}

func formatDelivered(ms []mail) string {
	var b strings.Builder
	b.WriteString(DeliveredHeader + "\n")
	for _, m := range ms {
		fmt.Fprintf(&b, "\n[%s]\n%s\n", m.at.Format(time.DateTime), m.text)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Unsend takes back the newest unread mail with exactly text, when the
// person made it the answer of a question instead (a line typed just
// before the question, confirmed as its answer): the model gets it once,
// as the answer. It reports whether the mail was still unread. The brief
// keeps the line; it was said.
func (c *Channel) Unsend(text string) bool {
	c.mu.Lock()
	i := len(c.inbox) - 1
	for i >= 0 && c.inbox[i].text != text {
		i--
	}
	if i < 0 {
		c.mu.Unlock()
		return false
	}
	m := c.inbox[i]
	c.inbox = append(c.inbox[:i:i], c.inbox[i+1:]...)
	c.mu.Unlock()
	if err := c.journal.put(record{Type: "read", Call: "unsent:" + m.id, Mails: []string{m.id}}); err != nil {
		c.emitError("take back the mail", err)
	}
	return true
}
