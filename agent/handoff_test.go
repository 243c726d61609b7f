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
