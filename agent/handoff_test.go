package agent_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
)

var handoffPath = regexp.MustCompile(`to (\S+\.md) now`)

// handoffModel fills the context on its first answer, writes the handoff
// document when asked, and finishes in the successor session.
func handoffModel(r *modeltest.Request) modeltest.Turn {
	last := r.Messages[len(r.Messages)-1].TextOf()
	switch {
	case strings.Contains(last, "You are taking over"):
		return modeltest.Turn{Text: "continued from the handoff", Usage: &model.Usage{Input: 3000}}
	case strings.Contains(last, "Your context is nearly full"):
		in, _ := json.Marshal(map[string]string{"file_path": handoffPath.FindStringSubmatch(last)[1],
			"content": "## Task\nCount things.\n## Next\nCount the rest.\n"})
		return modeltest.Turn{ToolCalls: []modeltest.ToolCall{{Name: "Write", Input: string(in)}},
			Usage: &model.Usage{Input: 171_000}}
	case len(r.Messages) == 1:
		return modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Glob", `{"pattern":"*"}`)},
			Usage: &model.Usage{Input: 170_000}}
	}
	return modeltest.Turn{Text: "handoff written", Usage: &model.Usage{Input: 172_000}}
}

func TestHandoffContinuesInANewSession(t *testing.T) { // R4.7, R4.8
	f := newFixture(t, handoffModel)
	res := f.run(agent.Spec{}, "count things", agent.RunOptions{})
	if !res.OK || res.Text != "continued from the handoff" || len(res.Retired) != 1 || res.Retired[0] == res.SessionID {
		t.Fatalf("result = %+v", res)
	}
	var phases []string
	var inits []string
	f.mu.Lock()
	for _, e := range f.events {
		if e.Kind == event.Handoff {
			phases = append(phases, e.Payload["phase"].(string))
		}
		if e.Kind == event.Init {
			inits = append(inits, e.Payload["session"].(string))
		}
	}
	f.mu.Unlock()
	if strings.Join(phases, ",") != "writing,done" || len(inits) != 2 || inits[1] != res.SessionID {
		t.Fatalf("handoff phases %v, inits %v", phases, inits)
	}
	reqs := f.srv.Requests()
	first := reqs[len(reqs)-1]
	if len(first.Messages) != 1 || !strings.Contains(first.Messages[0].TextOf(), "Count the rest.") {
		t.Fatalf("successor's first request: %+v", first.Messages)
	}
	ctx := context.Background()
	doc, ok, err := f.rt.Store().Summary(ctx, store.SessionKey(f.ws, res.Retired[0]))
	if err != nil || !ok || !strings.Contains(doc, "Count the rest.") {
		t.Fatalf("summary of the retired session: %q %v %v", doc, ok, err)
	}
	if got := f.kinds(res.Retired[0]); !strings.HasSuffix(got, "handoff") {
		t.Fatalf("retired session entries: %s", got)
	}
}

func TestHandoffBuiltFromStoreWhenModelWritesNothing(t *testing.T) { // R4.7
	respond := func(r *modeltest.Request) modeltest.Turn {
		last := r.Messages[len(r.Messages)-1].TextOf()
		switch {
		case strings.Contains(last, "You are taking over"):
			if !strings.Contains(last, "built by flower") || !strings.Contains(last, "[Glob] *") {
				return modeltest.Turn{Text: "bad handoff: " + last}
			}
			return modeltest.Turn{Text: "ok"}
		case len(r.Messages) == 1:
			return modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Glob", `{"pattern":"*"}`)},
				Usage: &model.Usage{Input: 190_000}}
		}
		return modeltest.Turn{Text: "I will not write it."}
	}
	f := newFixture(t, respond)
	res := f.run(agent.Spec{}, "look", agent.RunOptions{})
	if !res.OK || res.Text != "ok" {
		t.Fatalf("result = %+v", res)
	}
}

// storeHandedOff stores a session a process was killed in right after its
// handoff entry: the successor is named (the entry's uuid) and, when
// started, holds its first message and what follows.
func storeHandedOff(t *testing.T, f *fixture, successor ...store.Entry) (old, succ string) {
	t.Helper()
	old, succ = "11111111-2222-3333-4444-aaaaaaaaaaaa", "22222222-2222-3333-4444-bbbbbbbbbbbb"
	storeHistory(t, f, old, userEntry("count things"), callEntry("toolu_g", "Glob", `{"pattern":"*"}`),
		opEntry(store.KindResult, "toolu_g", "Glob"),
		store.Entry{Kind: store.KindAssistant, Message: &model.Message{Role: model.Assistant,
			Content: []model.Block{&model.Text{Text: "handoff written"}}}},
		store.Entry{UUID: succ, Kind: store.KindHandoff, Text: "## Next\nCount the rest.\n"})
	if len(successor) > 0 {
		storeHistory(t, f, succ, successor...)
	}
	return old, succ
}

// bindWork is a workflow's With: the step "work" is bound to the session
// in the same commit as its first message.
func bindWork(f *fixture) func(string) store.Batch {
	return func(session string) store.Batch {
		return store.Batch{Bind: []store.Binding{{Workspace: f.ws, Step: "work", Session: session}}}
	}
}

// TestResumeAfterHandoffStartsTheNamedSuccessor: killed after the handoff
// entry, before the successor's first message (issue 9). The resumed run
// starts the successor the entry names, from the stored document, instead
// of reporting the handoff turn's text as the step's result (R4.7).
func TestResumeAfterHandoffStartsTheNamedSuccessor(t *testing.T) {
	f := newFixture(t, handoffModel)
	old, succ := storeHandedOff(t, f)
	fs := withFaultStore(f, agent.Options{})
	res := f.run(agent.Spec{Name: "work"}, "", agent.RunOptions{Resume: old, With: bindWork(f)})
	if !res.OK || res.Text != "continued from the handoff" || res.SessionID != succ ||
		len(res.Retired) != 1 || res.Retired[0] != old || res.Stop != agent.StopEnded {
		t.Fatalf("result = %+v", res)
	}
	first := f.srv.Requests()[0]
	if f.srv.Count() != 1 || len(first.Messages) != 1 || !strings.Contains(first.Messages[0].TextOf(), "Count the rest.") {
		t.Fatalf("successor's first request: %+v", first.Messages)
	}
	if got, want := strings.Join(fs.binds, "; "), "work="+succ+": user"; got != want {
		t.Fatalf("bindings committed: %q, want %q", got, want)
	}
	if got := f.kinds(old); !strings.HasSuffix(got, "handoff") {
		t.Fatalf("the retired session was written to: %s", got)
	}
}

// TestResumeAfterHandoffContinuesTheStartedSuccessor: killed after the
// successor's first message; its stored work is continued, not redone.
func TestResumeAfterHandoffContinuesTheStartedSuccessor(t *testing.T) {
	f := newFixture(t, handoffModel)
	old, succ := storeHandedOff(t, f, userEntry("[flower] You are taking over ... Count the rest."),
		store.Entry{Kind: store.KindAssistant, Message: &model.Message{Role: model.Assistant,
			Content: []model.Block{&model.Text{Text: "counted the rest"}}}})
	res := f.run(agent.Spec{Name: "work"}, "", agent.RunOptions{Resume: old, With: bindWork(f)})
	if !res.OK || res.Text != "counted the rest" || res.SessionID != succ || f.srv.Count() != 0 ||
		len(res.Retired) != 1 || res.Retired[0] != old {
		t.Fatalf("result = %+v after %d requests", res, f.srv.Count())
	}
}

// TestHandoffSuccessorIsNamedByItsEntry pins the scheme resume relies on:
// the successor's id is the uuid of the handoff entry.
func TestHandoffSuccessorIsNamedByItsEntry(t *testing.T) {
	f := newFixture(t, handoffModel)
	res := f.run(agent.Spec{}, "count things", agent.RunOptions{})
	es := f.entries(res.Retired[0])
	if last := es[len(es)-1]; !res.OK || last.Kind != store.KindHandoff || last.UUID != res.SessionID {
		t.Fatalf("handoff entry %s %q, successor %q", last.Kind, last.UUID, res.SessionID)
	}
}

// TestResumeFinishesAHandoffCutBeforeItsEntry: killed while the model was
// writing the handoff document, before the handoff entry. The resumed run
// finishes the handoff instead of ending the step with the handoff turn's
// text (issue 9, R4.7).
func TestResumeFinishesAHandoffCutBeforeItsEntry(t *testing.T) {
	old := "11111111-2222-3333-4444-eeeeeeeeeeee"
	ask := userEntry("[flower] Your context is nearly full (171000 of 200000 tokens), so a fresh session will take over this work. " +
		"Write the handoff document to .flower/handoff/" + old + ".md now with the Write tool.")
	tests := []struct {
		name  string
		after []store.Entry
	}{
		{"the model had not answered", nil},
		{"the model had ended its turn", []store.Entry{{Kind: store.KindAssistant, Message: &model.Message{
			Role: model.Assistant, Content: []model.Block{&model.Text{Text: "handoff written"}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, handoffModel)
			storeHistory(t, f, old, append([]store.Entry{userEntry("count things"), callEntry("toolu_g", "Glob", `{"pattern":"*"}`),
				opEntry(store.KindResult, "toolu_g", "Glob"), ask}, tt.after...)...)
			res := f.run(agent.Spec{Name: "work"}, "", agent.RunOptions{Resume: old})
			if !res.OK || res.Text != "continued from the handoff" || res.SessionID == old ||
				len(res.Retired) != 1 || res.Retired[0] != old {
				t.Fatalf("result = %+v", res)
			}
			if got := f.kinds(old); !strings.HasSuffix(got, "handoff") {
				t.Fatalf("retired session entries: %s", got)
			}
		})
	}
}
