package term

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/human"
)

// TestSlashCommandsStayLocal: lines starting with / and a bare exit are
// never sent (R10.3).
func TestSlashCommandsStayLocal(t *testing.T) {
	ch := &fakeChannel{}
	var said, did []string
	c := Commands{
		Status: func() { did = append(did, "status") },
		Exit:   func() { did = append(did, "exit") },
		Say:    func(s string) { said = append(said, s) },
		Closed: func() { did = append(did, "closed") },
	}
	in := strings.NewReader("/help\n/status\n/exit\n/frobnicate now\nexit\nQuit.\n//etc is a directory\n/new\n")
	ReadInput(context.Background(), in, ch, c)
	if diff := cmp.Diff([]string{"mail: /etc is a directory"}, ch.log); diff != "" {
		t.Errorf("sent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"status", "exit", "closed"}, did); diff != "" {
		t.Errorf("commands run (-want +got):\n%s", diff)
	}
	want := []string{HelpText, "  unknown command /frobnicate (not sent): /help lists the commands; //text sends a note starting with /",
		exitHint, exitHint, "  not available here"}
	if diff := cmp.Diff(want, said); diff != "" {
		t.Errorf("said (-want +got):\n%s", diff)
	}
}

// TestClosedOnlyAfterInput: input that was empty from the start (a
// script's /dev/null) closes silently.
func TestClosedOnlyAfterInput(t *testing.T) {
	closed := false
	ReadInput(context.Background(), strings.NewReader(""), &fakeChannel{}, Commands{Closed: func() { closed = true }})
	if closed {
		t.Error("Closed called for input that never had a line")
	}
}

// TestOfferedAnswer: a line sent as a note shortly before a question is
// offered as its answer and Enter confirms it; an older line is not.
func TestOfferedAnswer(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	o := &Offer{Now: func() time.Time { return now }}
	ch := &fakeChannel{}
	c := Commands{Offer: o}
	handleLine("2", ch, c) // a note: no question yet
	ask := human.Ask{ID: "q1", Question: "which?", Options: []string{"red", "blue"}, Asked: now.Add(3 * time.Second)}
	ch.pending = []human.Ask{ask}
	line, ok := o.For(ask)
	if !ok || line != "2" {
		t.Fatalf("For = %q, %v; want the line typed 3 s before", line, ok)
	}
	handleLine("", ch, c)
	if diff := cmp.Diff([]string{"mail: 2", "answer q1: blue"}, ch.log); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	handleLine("late", ch, c)
	late := human.Ask{ID: "q2", Asked: now.Add(OfferWindow + time.Second)}
	if _, ok := o.For(late); ok {
		t.Error("a line typed long before the question was offered")
	}
	ch.pending = []human.Ask{late}
	handleLine("", ch, c)
	if len(ch.log) != 3 {
		t.Errorf("Enter without an offer answered: %q", ch.log)
	}
}

// TestCommandsBeforeTheInterruptNote: after a Ctrl-C the next line is the
// interrupt's note, but a command stays a command.
func TestCommandsBeforeTheInterruptNote(t *testing.T) {
	var notes, did []string
	noting := true
	c := Commands{
		Exit: func() { did = append(did, "exit") },
		Note: func(line string) bool {
			if !noting {
				return false
			}
			noting = false
			notes = append(notes, line)
			return true
		},
	}
	ReadInput(context.Background(), strings.NewReader("/exit\nexit\n//x then more\n"), &fakeChannel{}, c)
	if diff := cmp.Diff([]string{"/x then more"}, notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"exit"}, did); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}
