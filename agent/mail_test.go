package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
)

const journalKey = store.HumanJournal

// mailFixture is a runtime whose human channel journals in the runtime's
// store, as the CLI wires it.
func mailFixture(t *testing.T, respond modeltest.Responder) (*fixture, *human.Channel, store.Store) {
	t.Helper()
	f := &fixture{t: t, ws: t.TempDir()}
	f.srv = modeltest.NewAnthropic(respond)
	t.Cleanup(f.srv.Close)
	s := openStore(t, f.ws)
	ch := human.New(human.Options{Store: s, JournalKey: journalKey, Workbench: t.TempDir()})
	f.rt = f.runtimeWith(agent.Options{Store: s, Tools: ch.Tools(), Mail: ch, MailTool: human.InboxName})
	return f, ch, s
}

// countIn counts text in every user text and tool result of a request.
func countIn(r *modeltest.Request, text string) int {
	n := 0
	for _, m := range r.Messages {
		n += strings.Count(m.TextOf(), text)
		for _, res := range toolResultsOf(m.Content) {
			n += strings.Count(res, text)
		}
	}
	return n
}

// TestMailArrivesWithoutInbox: mail the model never asks for reaches it at
// the next message boundary, marked as the person's, durable before the
// request that carries it, once; mail that comes as the model ends its
// turn becomes the next user turn; a restored channel finds nothing left
// to deliver (R10.3).
func TestMailArrivesWithoutInbox(t *testing.T) {
	var ch *human.Channel
	var s store.Store
	durableBefore := map[int]bool{}
	f, ch, s := mailFixture(t, func(r *modeltest.Request) modeltest.Turn {
		switch r.N {
		case 1:
			ch.Send("use tabs") // typed while the model works
			return modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Glob", `{"pattern":"*"}`)}}
		case 2:
			durableBefore[2] = deliveries(t, s) == 1
			ch.Send("and add a README") // typed as the model ends its turn
			return modeltest.Turn{Text: "Done."}
		case 3:
			durableBefore[3] = deliveries(t, s) == 2
			return modeltest.Turn{Text: "README added too."}
		}
		return modeltest.Turn{Fault: &modeltest.Fault{Status: 500, Message: "too many requests"}}
	})
	res := f.run(agent.Spec{Name: "work"}, "do it", agent.RunOptions{})
	if !res.OK || res.Text != "README added too." {
		t.Fatalf("run: %+v", res)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if n := countIn(reqs[1], "use tabs"); n != 1 || !strings.Contains(lastUserText(reqs[1]), human.DeliveredHeader) {
		t.Errorf("request 2: the note %d times, last user message %q; want it once, with the tool's result, marked", n, lastUserText(reqs[1]))
	}
	if n := countIn(reqs[2], "and add a README"); n != 1 || countIn(reqs[2], "use tabs") != 1 {
		t.Errorf("request 3: %q", lastUserText(reqs[2]))
	}
	if !durableBefore[2] || !durableBefore[3] {
		t.Errorf("mail not in the store before the request that carried it: %v", durableBefore)
	}
	// A new process: the journal says both were delivered.
	again := human.New(human.Options{Store: s, JournalKey: journalKey, Workbench: t.TempDir()})
	if err := again.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	if text, _, _ := again.Deliver(); text != "" {
		t.Errorf("a restored channel delivers again: %q", text)
	}
}

// TestMailWaitsForAStepThatTakesIt: a run not allowed the inbox (the
// judge) gets no mail; the next run that is (work) does.
func TestMailWaitsForAStepThatTakesIt(t *testing.T) {
	f, ch, _ := mailFixture(t, modeltest.Script(modeltest.Turn{Text: "judged"}, modeltest.Turn{Text: "worked"}))
	ch.Send("typed during the judge")
	if res := f.run(agent.Spec{Name: "judge", Tools: []string{"Read"}}, "judge it", agent.RunOptions{}); !res.OK {
		t.Fatalf("judge: %+v", res)
	}
	if res := f.run(agent.Spec{Name: "work"}, "work on", agent.RunOptions{}); !res.OK {
		t.Fatalf("work: %+v", res)
	}
	reqs := f.srv.Requests()
	if countIn(reqs[0], "typed during the judge") != 0 || countIn(reqs[1], "typed during the judge") != 1 {
		t.Errorf("judge saw %q, work saw %q", lastUserText(reqs[0]), lastUserText(reqs[1]))
	}
}

// failingMarks fails the commit that carries a mail delivery.
type failingMarks struct{ store.Store }

func (s failingMarks) Commit(ctx context.Context, b store.Batch) error {
	for _, e := range b.Entries {
		if e.Key == journalKey {
			return errors.New("disk full")
		}
	}
	return s.Store.Commit(ctx, b)
}

// TestMailBackWhenTheDeliveryFails: a delivery whose commit fails ends the
// run and leaves the mail unread, in memory and in the journal.
func TestMailBackWhenTheDeliveryFails(t *testing.T) {
	f, ch, s := mailFixture(t, modeltest.Script(modeltest.Turn{Text: "never"}))
	f.rt = f.runtimeWith(agent.Options{Store: failingMarks{s}, Tools: ch.Tools(), Mail: ch, MailTool: human.InboxName})
	ch.Send("keep me")
	if res := f.run(agent.Spec{Name: "work"}, "go", agent.RunOptions{}); res.OK || !strings.Contains(res.Error, "disk full") {
		t.Fatalf("run: %+v", res)
	}
	if text, _, _ := ch.Deliver(); !strings.Contains(text, "keep me") {
		t.Errorf("after a failed delivery the mail is gone: %q", text)
	}
	again := human.New(human.Options{Store: s, JournalKey: journalKey, Workbench: t.TempDir()})
	if err := again.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	if text, _, _ := again.Deliver(); !strings.Contains(text, "keep me") {
		t.Errorf("after a failed delivery the journal lost the mail: %q", text)
	}
}

// deliveries counts the journal's records of delivered mail. Each commits
// in one transaction with the message that carries the mail, so a count
// seen by a request means that message was durable before it.
func deliveries(t *testing.T, s store.Store) int {
	es, err := s.Load(context.Background(), journalKey)
	if err != nil {
		t.Error(err)
	}
	n := 0
	for _, e := range es {
		if strings.Contains(e.Text, `"call":"delivered:`) {
			n++
		}
	}
	return n
}

func toolResultsOf(blocks []model.Block) []string {
	var out []string
	for _, b := range blocks {
		if r, ok := b.(*model.ToolResult); ok {
			out = append(out, r.Content)
		}
	}
	return out
}
