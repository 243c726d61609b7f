package human

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/tool"
)

func TestAskAnswered(t *testing.T) {
	tests := []struct {
		name         string
		input        string
		wantQuestion string
		wantOptions  []string
	}{
		{"no options", `{"question":"Which database?"}`, "Which database?", nil},
		{"options pass through", `{"question":"Which database?","options":["SQLite","PostgreSQL"]}`,
			"Which database?", []string{"SQLite", "PostgreSQL"}},
		{"blank options dropped, text trimmed", `{"question":"  Which database? ","options":[" SQLite ",""," "]}`,
			"Which database?", []string{"SQLite"}},
		{"null options", `{"question":"Which database?","options":null}`, "Which database?", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			done := f.goAsk(context.Background(), tt.input)
			a := f.next(t)
			want := Ask{ID: "q1", Question: tt.wantQuestion, Options: tt.wantOptions, Asked: start, State: Asked}
			if diff := cmp.Diff(want, a); diff != "" {
				t.Errorf("NextAsk (-want +got):\n%s", diff)
			}
			if !f.c.Answer(a.ID, "SQLite") {
				t.Fatal("Answer = false, want true")
			}
			o := wait(t, done)
			if got, want := o.res, (tool.Result{Content: "The person answered:\n\nSQLite"}); o.err != nil || got != want {
				t.Errorf("result = %+v, %v; want %+v", got, o.err, want)
			}
			if got := f.c.Pending(); len(got) != 0 {
				t.Errorf("Pending after answer = %v, want none", got)
			}
			checkAnsweredEvents(t, f.rec, tt.wantQuestion, tt.wantOptions)
		})
	}
}

func checkAnsweredEvents(t *testing.T, rec *recorder, question string, options []string) {
	t.Helper()
	if got, want := rec.states("q1"), []string{"asked", "answered"}; !cmp.Equal(got, want) {
		t.Errorf("states = %v, want %v", got, want)
	}
	asked := rec.events()[0]
	if asked.Text != question || asked.Payload["kind"] != "question" {
		t.Errorf("asked event = %+v", asked)
	}
	if got, want := asked.Payload["options"], append([]string{}, options...); !cmp.Equal(got, want) {
		t.Errorf("asked options = %#v, want %#v", got, want)
	}
	settled := rec.last(t, "q1")
	if settled.Payload["answer"] != "SQLite" || settled.Text != "q1 answered: SQLite" {
		t.Errorf("settled event = %+v", settled)
	}
	// The settled Ask carries its state, answer and wait (seed 004).
	if a, ok := settled.Raw.(Ask); !ok || a.State != Answered || a.Answer != "SQLite" || a.Settled.IsZero() ||
		a.WaitedS(time.Time{}) != settled.Payload["waited_s"] {
		t.Errorf("settled event's Ask = %+v, payload %v", settled.Raw, settled.Payload)
	}
}

// TestAskSettledWithoutAnswer covers the settlements a waiting ask can reach
// other than a normal answer, and that the ask is then no longer waiting.
func TestAskSettledWithoutAnswer(t *testing.T) {
	tests := []struct {
		name      string
		settle    func(t *testing.T, f *fixture, id string)
		wantState string
		want      string
	}{
		{"timeout", func(t *testing.T, f *fixture, _ string) { f.clk.fire(t) }, "timeout", TimeoutText},
		{"declined with reason", func(t *testing.T, f *fixture, id string) { f.c.Decline(id, "not now") },
			"declined", DeclinedText + "\n\nTheir reason: not now"},
		{"declined without reason", func(t *testing.T, f *fixture, id string) { f.c.Decline(id, "") },
			"declined", DeclinedText},
		{"empty answer", func(t *testing.T, f *fixture, id string) { f.c.Answer(id, "  ") }, "answered", emptyText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			done := f.goAsk(context.Background(), `{"question":"Tabs or spaces?"}`)
			a := f.next(t)
			tt.settle(t, f, a.ID)
			o := wait(t, done)
			if o.err != nil || o.res.Content != tt.want || o.res.IsError {
				t.Errorf("result = %+v, %v; want %q", o.res, o.err, tt.want)
			}
			if got, want := f.rec.states(a.ID), []string{"asked", tt.wantState}; !cmp.Equal(got, want) {
				t.Errorf("states = %v, want %v", got, want)
			}
			if f.c.Answer(a.ID, "late") || f.c.Decline(a.ID, "late") {
				t.Error("Answer/Decline on a settled ask = true, want false")
			}
			if got := f.c.Pending(); len(got) != 0 {
				t.Errorf("Pending = %v, want none", got)
			}
		})
	}
}

func TestAnswerUnknownID(t *testing.T) {
	f := newFixture(t, Options{})
	done := f.goAsk(context.Background(), `{"question":"Q?"}`)
	a := f.next(t)
	for _, id := range []string{"", "q2", "Q1", "nope"} {
		if f.c.Answer(id, "x") || f.c.Decline(id, "x") {
			t.Errorf("Answer/Decline(%q) = true, want false", id)
		}
	}
	if !f.c.Answer(a.ID, "yes") || f.c.Answer(a.ID, "again") {
		t.Error("first Answer should win, the second should report false")
	}
	if o := wait(t, done); o.res.Content != "The person answered:\n\nyes" {
		t.Errorf("result = %q", o.res.Content)
	}
}

// TestTimeoutDuration checks which timer an ask sets.
func TestTimeoutDuration(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		want    time.Duration // 0: no timer at all
	}{
		{"the default", DefaultTimeout, DefaultTimeout},
		{"explicit", 90 * time.Second, 90 * time.Second},
		{"forever sets no timer", Forever, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{Timeout: tt.timeout})
			done := f.goAsk(context.Background(), `{"question":"Q?"}`)
			a := f.next(t) // the timer is set before the ask is pending
			if tt.want == 0 {
				f.clk.noTimer(t)
				f.c.Answer(a.ID, "ok")
				wait(t, done)
				return
			}
			if got := f.clk.fire(t); got != tt.want {
				t.Errorf("timer = %v, want %v", got, tt.want)
			}
			if o := wait(t, done); o.res.Content != TimeoutText {
				t.Errorf("result = %q, want the timeout text", o.res.Content)
			}
			if got := f.rec.last(t, a.ID).Payload["waited_s"]; got != tt.want.Seconds() {
				t.Errorf("waited_s = %v, want %v", got, tt.want.Seconds())
			}
		})
	}
}

func TestUnattended(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
	}{
		{"Unattended", Unattended},
		{"any negative", -5 * time.Second},
		{"--timeout 0", TimeoutFromSeconds(ptr(0.0))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{Timeout: tt.timeout})
			for i := 1; i <= 3; i++ {
				res := f.askNow(t, `{"question":"Q?","options":["a","b"]}`)
				if res != (tool.Result{Content: TimeoutText}) {
					t.Errorf("ask %d = %+v, want the timeout text", i, res)
				}
				// Settled at once: never pending, never announced as asked.
				id := fmt.Sprintf("q%d", i)
				if got, want := f.rec.states(id), []string{"timeout"}; !cmp.Equal(got, want) {
					t.Errorf("states of %s = %v, want %v", id, got, want)
				}
			}
			f.clk.noTimer(t)
			if got := f.c.Pending(); len(got) != 0 {
				t.Errorf("Pending = %v, want none", got)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := f.c.NextAsk(ctx); !errors.Is(err, context.Canceled) {
				t.Errorf("NextAsk = %v, want context.Canceled: nothing was ever pending", err)
			}
		})
	}
}

func TestMaxAsks(t *testing.T) {
	tests := []struct {
		name string
		max  *int
		want []string
	}{
		{"nil is unlimited", nil, []string{"timeout", "timeout", "timeout"}},
		{"zero never asks", ptr(0), []string{"over_budget", "over_budget", "over_budget"}},
		{"one", ptr(1), []string{"timeout", "over_budget", "over_budget"}},
		{"negative is zero", ptr(-1), []string{"over_budget", "over_budget", "over_budget"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Unattended, so the asks that are allowed settle at once too.
			f := newFixture(t, Options{MaxAsks: tt.max, Timeout: Unattended})
			var got []string
			for i := range tt.want {
				res := f.askNow(t, `{"question":"Q?"}`)
				state := f.rec.states(fmt.Sprintf("q%d", i+1))
				got = append(got, state...)
				if state[0] == "over_budget" && res.Content != OverBudgetText {
					t.Errorf("over budget result = %q", res.Content)
				}
			}
			if !cmp.Equal(got, tt.want) {
				t.Errorf("states = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMaxAsksAttended(t *testing.T) {
	f := newFixture(t, Options{MaxAsks: ptr(1)})
	done := f.goAsk(context.Background(), `{"question":"first?"}`)
	f.c.Answer(f.next(t).ID, "yes")
	wait(t, done)
	if res := f.askNow(t, `{"question":"second?"}`); res.Content != OverBudgetText {
		t.Errorf("second ask = %q, want over budget", res.Content)
	}
	if got, want := f.rec.states("q2"), []string{"over_budget"}; !cmp.Equal(got, want) {
		t.Errorf("states of q2 = %v, want %v", got, want)
	}
}

// TestInvalid checks that bad input is an error result, settles at once and
// does not use up the budget.
func TestInvalid(t *testing.T) {
	f := newFixture(t, Options{MaxAsks: ptr(1), Timeout: Unattended})
	inputs := []string{`{"question":""}`, `{"question":"   "}`, `{}`, `null`, `not json`,
		`{"question":3}`, `{"question":"Q?","options":"a"}`}
	for i, in := range inputs {
		res := f.askNow(t, in)
		if !res.IsError || res.Content == "" {
			t.Errorf("ask(%s) = %+v, want an error result", in, res)
		}
		if got, want := f.rec.states(fmt.Sprintf("q%d", i+1)), []string{"invalid"}; !cmp.Equal(got, want) {
			t.Errorf("ask(%s) states = %v, want %v", in, got, want)
		}
	}
	if res := f.askNow(t, `{"question":"valid?"}`); res.Content != TimeoutText {
		t.Errorf("valid ask after invalid ones = %q, want the timeout text (budget untouched)", res.Content)
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	f := newFixture(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := f.goAsk(ctx, `{"question":"Q?"}`)
	a := f.next(t)
	cancel()
	o := wait(t, done)
	if !errors.Is(o.err, context.Canceled) {
		t.Errorf("ask error = %v, want context.Canceled", o.err)
	}
	if got := f.c.Pending(); len(got) != 0 {
		t.Errorf("Pending = %v, want none", got)
	}
	if f.c.Answer(a.ID, "too late") {
		t.Error("Answer after cancel = true, want false")
	}
	e := f.rec.last(t, a.ID)
	if e.Payload["state"] != "declined" || e.Payload["reason"] != cancelledReason {
		t.Errorf("settled event = %+v, want declined: %s", e.Payload, cancelledReason)
	}
}

func TestCancelledBeforeAsking(t *testing.T) {
	f := newFixture(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.ask.Run(ctx, json.RawMessage(`{"question":"Q?"}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	if evs := f.rec.events(); len(evs) != 0 {
		t.Errorf("events = %v, want none", evs)
	}
}

func TestPendingOrderAndNextAsk(t *testing.T) {
	f := newFixture(t, Options{})
	questions := []string{"first?", "second?", "third?"}
	var dones []<-chan outcome
	for _, q := range questions {
		dones = append(dones, f.goAsk(context.Background(), fmt.Sprintf(`{"question":%q}`, q)))
		f.next(t) // each is handed out once, in order
		f.clk.advance(time.Minute)
	}
	var got []string
	for _, a := range f.c.Pending() {
		got = append(got, a.ID+" "+a.Question+" "+a.Asked.Format("15:04"))
	}
	want := []string{"q1 first? 15:04", "q2 second? 15:05", "q3 third? 15:06"}
	if !cmp.Equal(got, want) {
		t.Errorf("Pending = %v, want %v", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if a, err := f.c.NextAsk(ctx); err == nil {
		t.Errorf("NextAsk = %v, want an error: every pending ask was handed out", a)
	}
	f.c.Answer("q2", "b")
	if got := f.c.Pending(); len(got) != 2 || got[0].ID != "q1" || got[1].ID != "q3" {
		t.Errorf("Pending after answering q2 = %v, want q1 q3", got)
	}
	f.c.Answer("q1", "a")
	f.c.Answer("q3", "c")
	for _, d := range dones {
		wait(t, d)
	}
}

func TestPendingIsACopy(t *testing.T) {
	f := newFixture(t, Options{})
	done := f.goAsk(context.Background(), `{"question":"Q?","options":["a","b"]}`)
	f.next(t)
	f.c.Pending()[0].Options[0] = "changed"
	if got := f.c.Pending()[0].Options[0]; got != "a" {
		t.Errorf("option = %q after a caller changed its copy, want a", got)
	}
	f.c.Answer("q1", "a")
	wait(t, done)
}

func TestTimeoutFromSeconds(t *testing.T) {
	tests := []struct {
		in   *float64
		want time.Duration
	}{
		{nil, Forever},
		{ptr(0.0), Unattended},
		{ptr(-3.0), Unattended},
		{ptr(0.5), 500 * time.Millisecond},
		{ptr(1800.0), DefaultTimeout},
		{ptr(1e300), Forever},
	}
	for _, tt := range tests {
		if got := TimeoutFromSeconds(tt.in); got != tt.want {
			t.Errorf("TimeoutFromSeconds(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	c := New(Options{Workbench: "/wb"})
	got := []any{c.timeout, c.maxAsks, c.qaLog, c.amend}
	want := []any{time.Duration(0), -1, filepath.FromSlash("/wb/notes/qa.md"), filepath.FromSlash("/wb/notes/brief.md")}
	if !cmp.Equal(got, want) {
		t.Errorf("defaults = %v, want %v", got, want)
	}
	c = New(Options{Workbench: "/wb", QALog: "/x/qa.md", Amend: "/x/b.md"})
	if c.qaLog != "/x/qa.md" || c.amend != "/x/b.md" {
		t.Errorf("explicit paths = %s %s", c.qaLog, c.amend)
	}
}

func TestTools(t *testing.T) {
	c := New(Options{})
	for _, tl := range c.Tools() {
		var schema struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(tl.Schema(), &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s schema: %v %s", tl.Name(), err, tl.Schema())
		}
		if tl.Class() != tool.Pure || tl.Description() == "" {
			t.Errorf("%s: class %v, description %q", tl.Name(), tl.Class(), tl.Description())
		}
	}
	names := tool.NewRegistry(c.Tools()...).Names()
	if want := []string{"ask", "inbox"}; !cmp.Equal(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
}

// TestPanickingSink: a broken consumer must not break the channel (R6.9).
func TestPanickingSink(t *testing.T) {
	c := New(Options{Timeout: Unattended, Workbench: t.TempDir(), Sink: func(event.Event) { panic("boom") }})
	ask, inbx := c.Tools()[0], c.Tools()[1]
	c.Send("hello")
	if res, err := ask.Run(context.Background(), json.RawMessage(`{"question":"Q?"}`)); err != nil || res.Content != TimeoutText {
		t.Errorf("ask = %+v, %v", res, err)
	}
	if res, _ := inbx.Run(context.Background(), nil); res.Content == InboxEmptyText {
		t.Error("mail lost")
	}
}

// TestRegisterOutOfOrder: two asks admitted as q1, q2 may start waiting as
// q2, q1 (each sets its timer in between); Pending stays oldest first and
// NextAsk still hands out both.
func TestRegisterOutOfOrder(t *testing.T) {
	f := newFixture(t, Options{})
	w1, _ := f.c.admit(question{text: "first?"})
	w2, _ := f.c.admit(question{text: "second?"})
	f.c.register(w2)
	if got := f.next(t).ID; got != "q2" {
		t.Errorf("NextAsk = %s, want q2", got)
	}
	f.c.register(w1)
	if got := f.next(t).ID; got != "q1" {
		t.Errorf("NextAsk = %s, want q1", got)
	}
	var got []string
	for _, a := range f.c.Pending() {
		got = append(got, a.ID)
	}
	if want := []string{"q1", "q2"}; !cmp.Equal(got, want) {
		t.Errorf("Pending = %v, want %v", got, want)
	}
}

// TestWithdrawLosesToAnswer: when the timer or a cancel comes just after the
// person answered, the answer stands.
func TestWithdrawLosesToAnswer(t *testing.T) {
	f := newFixture(t, Options{})
	w, _ := f.c.admit(question{text: "Q?"})
	f.c.register(w)
	f.c.Answer(w.ID, "yes")
	s, won := f.c.withdraw(w, settlement{state: Timeout})
	if won || s != (settlement{state: Answered, text: "yes"}) {
		t.Errorf("withdraw = %+v, %v; want the answer, false", s, won)
	}
}

// TestZeroTimeoutIsUnattended: seed 004's three values: the zero Options
// never waits (a forgotten timeout cannot hang a run nobody watches).
func TestZeroTimeoutIsUnattended(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second, Unattended} {
		c := New(Options{Timeout: d, Workbench: t.TempDir()})
		res, err := c.Tools()[0].Run(context.Background(), json.RawMessage(`{"question":"Q?"}`))
		if err != nil || res.Content != TimeoutText || len(c.Pending()) != 0 {
			t.Errorf("Timeout %v: %+v, %v, pending %v; want the timeout reply at once", d, res, err, c.Pending())
		}
	}
}

// TestRepliesReplaceable: the three fixed replies can be replaced (seed 004).
func TestRepliesReplaceable(t *testing.T) {
	zero := 0
	c := New(Options{Workbench: t.TempDir(), TimeoutText: "T", OverBudgetText: "B", DeclinedText: "D"})
	if res, _ := c.Tools()[0].Run(context.Background(), json.RawMessage(`{"question":"Q?"}`)); res.Content != "T" {
		t.Errorf("timeout reply %q, want T", res.Content)
	}
	c = New(Options{Workbench: t.TempDir(), MaxAsks: &zero, OverBudgetText: "B"})
	if res, _ := c.Tools()[0].Run(context.Background(), json.RawMessage(`{"question":"Q?"}`)); res.Content != "B" {
		t.Errorf("over-budget reply %q, want B", res.Content)
	}
	if got := (replies{declined: "D"}).result(settlement{state: Declined, text: "busy"}).Content; got != "D\n\nTheir reason: busy" {
		t.Errorf("declined reply %q", got)
	}
}

// TestAskEvent: Ask.Event(remaining) is the event of an ask as it stands,
// seed 004's Ask.event; the channel's events carry how many questions are
// left (-1: no limit).
func TestAskEvent(t *testing.T) { // issue 22 item 5, R6.3
	f := newFixture(t, Options{MaxAsks: ptr(2)})
	done := f.goAsk(context.Background(), `{"question":"first?","options":["a","b"]}`)
	a := f.next(t)
	f.clk.advance(1500 * time.Millisecond)
	f.c.Answer(a.ID, "a")
	wait(t, done)
	evs := f.rec.events()
	if len(evs) != 2 || evs[0].Payload["remaining"] != 1 || evs[1].Payload["remaining"] != 1 {
		t.Fatalf("events %+v: want asked and answered, 1 question left", evs)
	}
	// The same events, built from the Ask alone.
	if got := a.Event(1); !cmp.Equal(got.Payload, evs[0].Payload) || got.Text != evs[0].Text {
		t.Errorf("Event of the asked Ask = %+v, the channel sent %+v", got, evs[0])
	}
	settled := evs[1].Raw.(Ask)
	if got := settled.Event(1); !cmp.Equal(got.Payload, evs[1].Payload) || got.Text != "q1 answered: a" {
		t.Errorf("Event of the settled Ask = %+v, the channel sent %+v", got, evs[1])
	}
	if got := settled.Event(1).Payload["waited_s"]; got != 1.5 {
		t.Errorf("waited_s = %v, want 1.5", got)
	}
	if got := newFixture(t, Options{}).c.remaining(); got != -1 {
		t.Errorf("remaining without a limit = %d, want -1", got)
	}
}
