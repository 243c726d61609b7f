package human

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/mem"
	"github.com/flower-run/flower/tool"
)

// A crash is a second Channel over the same store: what the first kept in
// its journal must be there (issue 9 item 9, seed 002).

func journaled(t *testing.T, s store.Store) *Channel {
	t.Helper()
	opts := Options{Store: s, JournalKey: store.SideLog("/ws", store.HumanJournal), Workbench: t.TempDir(), Timeout: Forever}
	c := New(opts)
	if err := c.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

func runTool(t *testing.T, tl tool.Tool, call, input string) string {
	t.Helper()
	res, err := tl.Run(tool.WithCall(context.Background(), call), json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	return res.Content
}

func TestUnreadMailSurvivesACrash(t *testing.T) {
	s := mem.New()
	first := journaled(t, s)
	first.Send("also report the total size")
	second := journaled(t, s) // the process died before the inbox was read
	if got := runTool(t, second.Tools()[1], "call-1", `{}`); !strings.Contains(got, "also report the total size") {
		t.Fatalf("inbox after the crash: %q", got)
	}
	if got := runTool(t, second.Tools()[1], "call-2", `{}`); got != InboxEmptyText {
		t.Errorf("a second read: %q, want the mail read once", got)
	}
}

func TestInboxCallCutByACrashReadsItsMailAgain(t *testing.T) {
	s := mem.New()
	first := journaled(t, s)
	first.Send("use tabs")
	if got := runTool(t, first.Tools()[1], "call-1", `{}`); !strings.Contains(got, "use tabs") {
		t.Fatalf("first read: %q", got)
	}
	// The process died before call-1's result was stored: on resume the
	// pure call runs again, with the same id, and must not find it empty.
	second := journaled(t, s)
	if got := runTool(t, second.Tools()[1], "call-1", `{}`); !strings.Contains(got, "use tabs") {
		t.Errorf("call-1 again after the crash: %q, want the mail it read", got)
	}
	if got := runTool(t, second.Tools()[1], "call-2", `{}`); got != InboxEmptyText {
		t.Errorf("another call: %q, want nothing new", got)
	}
}

func TestAnsweredAskIsNotAskedAgain(t *testing.T) {
	s := mem.New()
	first := journaled(t, s)
	done := make(chan string)
	go func() { done <- runTool(t, first.Tools()[0], "call-1", `{"question":"Tabs or spaces?"}`) }()
	a, err := first.NextAsk(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	first.Answer(a.ID, "tabs")
	if got := <-done; !strings.Contains(got, "tabs") {
		t.Fatalf("answer %q", got)
	}
	// The result never reached the session: the call runs again.
	second := journaled(t, s)
	var asked []event.Event
	second.sink = func(e event.Event) { asked = append(asked, e) }
	if got := runTool(t, second.Tools()[0], "call-1", `{"question":"Tabs or spaces?"}`); got != "The person answered:\n\ntabs" {
		t.Errorf("call-1 again: %q, want the answer given before the crash", got)
	}
	if len(asked) != 0 || len(second.Pending()) != 0 {
		t.Errorf("the question was asked again: events %v", asked)
	}
}

func TestAskCutBeforeItSettledIsAskedAgain(t *testing.T) {
	s := mem.New()
	first := journaled(t, s)
	ctx, cancel := context.WithCancel(tool.WithCall(context.Background(), "call-1"))
	errc := make(chan error)
	go func() {
		_, err := first.Tools()[0].Run(ctx, json.RawMessage(`{"question":"Which port?"}`))
		errc <- err
	}()
	if _, err := first.NextAsk(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancel() // the run was stopped while the question waited
	if err := <-errc; err == nil {
		t.Fatal("a cancelled ask returned no error")
	}
	second := journaled(t, s)
	done := make(chan string)
	go func() { done <- runTool(t, second.Tools()[0], "call-1", `{"question":"Which port?"}`) }()
	a, err := second.NextAsk(context.Background())
	if err != nil || a.Question != "Which port?" {
		t.Fatalf("the unsettled question was not asked again: %+v, %v", a, err)
	}
	second.Answer(a.ID, "8080")
	if got := <-done; !strings.Contains(got, "8080") {
		t.Errorf("answer %q", got)
	}
}

// TestAnswerIsKeptWhenGiven: the person's answer is in the journal when
// Answer returns, before the ask's tool call takes it, so a process killed
// at once still answers the call with it (issue 22 item 1).
func TestAnswerIsKeptWhenGiven(t *testing.T) {
	s := mem.New()
	first := journaled(t, s)
	done := make(chan string, 1)
	go func() { done <- runTool(t, first.Tools()[0], "call-1", `{"question":"Tabs or spaces?"}`) }()
	a, err := first.NextAsk(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !first.Answer(a.ID, "tabs") {
		t.Fatal("the ask was not waiting")
	}
	second := journaled(t, s) // killed right after the person pressed Enter
	if got := runTool(t, second.Tools()[0], "call-1", `{"question":"Tabs or spaces?"}`); !strings.Contains(got, "tabs") {
		t.Errorf("call-1 after the kill: %q, want the answer given", got)
	}
	<-done
}
