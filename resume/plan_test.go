package resume

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

func user(text string) store.Entry {
	return store.Entry{Kind: store.KindUser, Message: &model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: text}}}}
}

func asst(calls ...string) store.Entry {
	m := &model.Message{Role: model.Assistant, Content: []model.Block{&model.Text{Text: "t"}}}
	for _, id := range calls {
		m.Content = append(m.Content, &model.ToolUse{ID: id, Name: "Bash", Input: json.RawMessage(`{}`)})
	}
	return store.Entry{Kind: store.KindAssistant, Message: m}
}

func op(kind store.Kind, id string) store.Entry {
	return store.Entry{Kind: kind, Op: &store.Op{ID: id, Tool: "Bash"}}
}

func started(id string) store.Entry { return op(store.KindOpStarted, id) }
func attempt(id string) store.Entry { return op(store.KindAttempt, id) }
func result(id string) store.Entry  { return op(store.KindResult, id) }

func text(kind store.Kind, s string) store.Entry { return store.Entry{Kind: kind, Text: s} }

func handoff(uuid, doc string) store.Entry {
	return store.Entry{UUID: uuid, Kind: store.KindHandoff, Text: doc}
}

// got is the part of a plan a table row states.
type got struct {
	Pending     map[string]int // call id -> runs
	Ended       bool
	Handoff     *Handoff
	Interrupted bool
	Note        string
	APIErrors   []string
	Last        bool
}

func summarize(p Plan) got {
	g := got{Ended: p.Ended, Handoff: p.Handoff, Interrupted: p.Interrupted, Note: p.Note,
		APIErrors: p.APIErrors, Last: p.Last != nil}
	for _, c := range p.Pending {
		if g.Pending == nil {
			g.Pending = map[string]int{}
		}
		g.Pending[c.Use.ID] = c.Runs
	}
	return g
}

func TestSession(t *testing.T) { // DESIGN §3.4, R5.3, R5.4, R5.7, R4.7, R2.8, issue 9
	h := func(es ...store.Entry) []store.Entry { return es }
	tests := []struct {
		name    string
		entries []store.Entry
		want    got
	}{
		{"empty", nil, got{}},
		{"prompt only: call the model", h(user("go")), got{}},
		{"turn ended", h(user("go"), asst()), got{Ended: true, Last: true}},
		{"ended then new prompt", h(user("go"), asst(), user("more")), got{Last: true}},
		{"ended then a runtime note", h(user("go"), asst(), text(store.KindNote, "resumed")), got{Last: true}},
		{"response durable, no tool ran", h(user("go"), asst("a", "b")),
			got{Pending: map[string]int{"a": 0, "b": 0}, Last: true}},
		{"intent durable, no result: ambiguous", h(user("go"), asst("a", "b"), started("a"), started("b"), result("a")),
			got{Pending: map[string]int{"b": 1}, Last: true}},
		{"all results: call the model", h(user("go"), asst("a"), started("a"), result("a")), got{Last: true}},
		// Group commit (issue 12): a pure result rides with the next
		// effect's result, a trailing one with the end of the turn. A crash
		// before that commit leaves a pure call with neither intent nor
		// result: pending with zero runs, so it is simply run again.
		{"pure result lost with the turn's last commit: run it again", h(user("go"), asst("p1", "e", "p2"), started("e"), result("p1"), result("e")),
			got{Pending: map[string]int{"p2": 0}, Last: true}},
		{"pure and effect results lost together: pure runs, effect ambiguous", h(user("go"), asst("p1", "e"), started("e")),
			got{Pending: map[string]int{"p1": 0, "e": 1}, Last: true}},
		{"older calls do not count", h(user("go"), asst("a"), result("a"), asst("b"), started("b")),
			got{Pending: map[string]int{"b": 1}, Last: true}},
		// issue 9: 4 kills during one Bash call gave 5 executions. The
		// attempts are counted, so the plan says how many ran.
		{"one retry recorded, cut again", h(user("go"), asst("a"), started("a"), attempt("a")),
			got{Pending: map[string]int{"a": 2}, Last: true}},
		{"retry recorded and completed", h(user("go"), asst("a"), started("a"), attempt("a"), result("a")), got{Last: true}},
		{"attempts of an older response do not count", h(user("go"), asst("a"), started("a"), attempt("a"), result("a"),
			asst("a2"), started("a2")), got{Pending: map[string]int{"a2": 1}, Last: true}},
		// issue 9: a full disk failed the result append; the in-process
		// retry sees the intent and the attempt, not a fresh crash.
		{"disk full after a retry", h(user("go"), asst("a"), started("a"), attempt("a"), text(store.KindAPIError, "x")),
			got{Pending: map[string]int{"a": 2}, Last: true, APIErrors: []string{"x"}}},
		{"api errors before a response", h(user("go"), text(store.KindAPIError, "overloaded"), text(store.KindAPIError, "529")),
			got{APIErrors: []string{"overloaded", "529"}}},
		{"api errors are forgotten once a response lands", h(user("go"), text(store.KindAPIError, "overloaded"), asst()),
			got{Ended: true, Last: true}},
		// issue 9: a kill during a handoff orphaned the successor.
		{"ends in a handoff", h(user("go"), asst("w"), started("w"), result("w"), asst(), handoff("succ", "# doc")),
			got{Handoff: &Handoff{Successor: "succ", Document: "# doc"}, Last: true}},
		{"a handoff followed by more is history", h(user("go"), asst(), handoff("succ", "# doc"), user("again")),
			got{Last: true}},
		// R2.8: the interrupt and the note are one write.
		{"interrupt with its note: call the model", h(user("go"), asst("a"), result("a"), text(store.KindInterrupt, "poem"), user("poem")),
			got{Interrupted: true, Last: true}},
		{"interrupt whose note was lost (older build)", h(user("go"), asst("a"), result("a"), text(store.KindInterrupt, "poem")),
			got{Interrupted: true, Note: "poem", Last: true}},
		{"lost note after an ended turn is still owed", h(user("go"), asst(), text(store.KindInterrupt, "poem")),
			got{Interrupted: true, Note: "poem", Last: true}},
		{"bare interrupt mid-work: continue", h(user("go"), asst("a"), started("a"), result("a"), text(store.KindInterrupt, "")),
			got{Interrupted: true, Last: true}},
		{"bare interrupt mid-call: the call is still pending", h(user("go"), asst("a", "b"), result("a"), text(store.KindInterrupt, "")),
			got{Pending: map[string]int{"b": 0}, Interrupted: true, Last: true}},
		{"bare interrupt after an ended turn: nothing to do", h(user("go"), asst(), text(store.KindInterrupt, "")),
			got{Ended: true, Interrupted: true, Last: true}},
		{"interrupt before any response", h(user("go"), text(store.KindInterrupt, "")), got{Interrupted: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Session(tt.entries)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, summarize(p)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSessionRefusesWhatItCannotRead(t *testing.T) {
	tests := []struct {
		name    string
		entries []store.Entry
		index   int
		want    error
	}{
		{"unknown kind", []store.Entry{user("go"), asst(), {UUID: "x9", Kind: "checkpoint"}}, 2, ErrUnknownKind},
		{"empty kind", []store.Entry{{UUID: "x0"}}, 0, ErrUnknownKind},
		{"response without message", []store.Entry{user("go"), {Kind: store.KindAssistant}}, 1, ErrMalformed},
		{"user without message", []store.Entry{{Kind: store.KindUser}}, 0, ErrMalformed},
		{"intent without op", []store.Entry{user("go"), asst("a"), {Kind: store.KindOpStarted}}, 2, ErrMalformed},
		{"attempt without op", []store.Entry{user("go"), asst("a"), {Kind: store.KindAttempt}}, 2, ErrMalformed},
		{"result without op", []store.Entry{user("go"), asst("a"), {Kind: store.KindResult}}, 2, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Session(tt.entries)
			var ee *EntryError
			if !errors.Is(err, tt.want) || !errors.As(err, &ee) || ee.Index != tt.index {
				t.Fatalf("err = %v, want %v at entry %d", err, tt.want, tt.index)
			}
		})
	}
}

func TestDecide(t *testing.T) { // R5.4, R5.7
	tests := []struct {
		runs   int
		policy Policy
		want   Action
	}{
		{0, Discard, RunCall}, // never started: no policy applies
		{0, Retry, RunCall},
		{1, Retry, RetryCall},
		{1, Prompt, RetryCall},
		{1, "", RetryCall},
		{2, Retry, GiveUp}, // intent + attempt, no result: poison, never a third run
		{5, Retry, GiveUp},
		{1, Skip, SkipCall},
		{2, Skip, SkipCall},
		{1, Discard, DiscardRun},
		{2, Discard, DiscardRun},
	}
	for _, tt := range tests {
		if got := Decide(Call{Runs: tt.runs}, tt.policy); got != tt.want {
			t.Errorf("Decide(runs %d, %q) = %q, want %q", tt.runs, tt.policy, got, tt.want)
		}
	}
}

func TestDecideIdempotent(t *testing.T) { // an idempotentHint MCP call (issue 13)
	tests := []struct {
		runs   int
		policy Policy
		want   Action
	}{
		{0, Skip, RunCall},
		{1, Retry, RetryCall},
		{2, Retry, RetryCall}, // a repeat is not a duplicate: past MaxRuns
		{1, Skip, RetryCall},  // skipping would only lose the result
		{MaxIdempotentRuns - 1, Skip, RetryCall},
		{MaxIdempotentRuns, Retry, GiveUp}, // still no loop on a call that kills flower
		{1, Discard, DiscardRun},
	}
	for _, tt := range tests {
		if got := Decide(Call{Runs: tt.runs, Idempotent: true}, tt.policy); got != tt.want {
			t.Errorf("Decide(idempotent, runs %d, %q) = %q, want %q", tt.runs, tt.policy, got, tt.want)
		}
	}
}

func TestPoliciesFor(t *testing.T) {
	ps := Policies{
		Default:     Skip,
		PerStep:     map[string]Policy{"publish": Discard, "lint": Prompt},
		PerTool:     map[string]Policy{"Bash": Retry, "Write": Prompt, "Edit": Discard},
		PerStepTool: map[string]map[string]Policy{"publish": {"Read": Retry}, "build": {"Bash": Skip}},
	}
	tests := []struct {
		step, tool string
		want       Policy
	}{
		{"publish", "Read", Retry}, // step+tool beats step
		{"build", "Bash", Skip},    // step+tool beats tool
		{"publish", "Bash", Discard},
		{"lint", "Edit", Retry},
		{"other", "Edit", Discard},
		{"other", "Write", Retry},
		{"other", "Glob", Skip},
		{"", "", Skip},
	}
	for _, tt := range tests {
		if got := ps.For(tt.step, tt.tool); got != tt.want {
			t.Errorf("For(%q, %q) = %q, want %q", tt.step, tt.tool, got, tt.want)
		}
	}
	if got := (Policies{}).For("x", "y"); got != Retry {
		t.Errorf("zero Policies: %q, want retry", got)
	}
}
