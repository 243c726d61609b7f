package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
	"github.com/flower-run/flower/view"
)

// blockTool interrupts the runtime from another goroutine, then blocks
// until its context is cancelled: a call cut in the middle.
type blockTool struct {
	rt   func() *agent.Runtime
	text string
}

func (*blockTool) Name() string            { return "Block" }
func (*blockTool) Description() string     { return "blocks" }
func (*blockTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (*blockTool) Class() tool.Class       { return tool.Effect }
func (b *blockTool) Run(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
	go b.rt().Interrupt(b.text)
	<-ctx.Done()
	return tool.Result{}, ctx.Err()
}

func TestInterruptContinuesWithText(t *testing.T) { // R2.8
	b := &blockTool{text: "stop that, write a poem instead"}
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Block", `{}`), call("Glob", `{"pattern":"*"}`)}},
		modeltest.Turn{Text: "A poem."},
	), b)
	b.rt = func() *agent.Runtime { return f.rt }
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if !res.OK || res.Text != "A poem." || res.Attempts != 1 {
		t.Fatalf("result = %+v", res)
	}
	got := lastUserText(f.srv.Requests()[1])
	if strings.Count(got, "R:"+view.Interrupted) != 2 || !strings.HasSuffix(got, "T:stop that, write a poem instead;") {
		t.Fatalf("request after interrupt ends with %q", got)
	}
	if n := len(f.eventLines(event.Interrupt)); n != 1 {
		t.Fatalf("%d interrupt events", n)
	}
}

func TestInterruptWithoutTextStops(t *testing.T) { // R2.8
	b := &blockTool{}
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Block", `{}`)}},
	), b)
	b.rt = func() *agent.Runtime { return f.rt }
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if res.OK || res.Error != "interrupted" || f.srv.Count() != 1 {
		t.Fatalf("result = %+v, %d requests", res, f.srv.Count())
	}
	if got := f.kinds(res.SessionID); got != "user assistant op_started tool_result interrupt" {
		t.Fatalf("entries = %q", got)
	}
}

func TestSubagentTranscriptUnderSubPath(t *testing.T) { // R2.5, R6.2
	respond := func(r *modeltest.Request) modeltest.Turn {
		if strings.Contains(r.System, "You are a subagent") {
			if len(r.Messages) == 1 {
				return modeltest.Turn{Text: "child looking", ToolCalls: []modeltest.ToolCall{call("Glob", `{"pattern":"*"}`)}}
			}
			return modeltest.Turn{Text: "child report: nothing here"}
		}
		if len(r.Messages) == 1 {
			return modeltest.Turn{ToolCalls: []modeltest.ToolCall{{ID: "toolu_task1", Name: "Task",
				Input: `{"description":"scout","prompt":"look around"}`}}}
		}
		return modeltest.Turn{Text: "parent done"}
	}
	f := newFixture(t, respond)
	res := f.run(agent.Spec{}, "delegate", agent.RunOptions{})
	if !res.OK || res.Text != "parent done" {
		t.Fatalf("result = %+v", res)
	}
	child, err := f.rt.Store().Load(context.Background(), store.SessionKey(f.ws, res.SessionID)+"/task-toolu_task1")
	if err != nil || len(child) != 4 {
		t.Fatalf("child transcript: %d entries, %v", len(child), err)
	}
	if got := lastUserText(f.srv.Requests()[3]); got != "R:child report: nothing here;" {
		t.Fatalf("parent got %q", got)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.events {
		sub, _ := e.Payload["subagent"].(string)
		if e.Kind == event.Text && strings.HasPrefix(e.Text, "child") && sub != "scout" {
			t.Fatalf("child text event not marked: %+v", e)
		}
		if e.Kind == event.Text && e.Text == "parent done" && sub != "" {
			t.Fatalf("parent text marked as subagent: %+v", e)
		}
	}
}

// TestResumeFinishesPendingCallsWithoutRepaying stores what a process
// killed right after a response became durable leaves behind, then resumes.
func TestResumeFinishesPendingCallsWithoutRepaying(t *testing.T) { // R5.3
	f := newFixture(t, modeltest.Script(modeltest.Turn{Text: "finished"}))
	id := "11111111-2222-3333-4444-555555555555"
	key := store.SessionKey(f.ws, id)
	use := &model.ToolUse{ID: "toolu_w", Name: "Write", Input: json.RawMessage(`{"file_path":"a.txt","content":"A"}`)}
	entries := []store.Entry{
		{UUID: "e1", Key: key, Kind: store.KindUser, Message: &model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: "write a"}}}},
		{UUID: "e2", Parent: "e1", Key: key, Kind: store.KindAssistant, Message: &model.Message{Role: model.Assistant, Content: []model.Block{use}}},
		{UUID: "e3", Parent: "e2", Key: key, Kind: store.KindOpStarted, Op: &store.Op{ID: "toolu_w", Tool: "Write"}},
	}
	ctx := context.Background()
	if err := f.rt.Store().Append(ctx, entries...); err != nil {
		t.Fatal(err)
	}
	if err := f.rt.Store().PutMeta(ctx, store.Meta{Key: key}); err != nil {
		t.Fatal(err)
	}
	res := f.run(agent.Spec{}, "", agent.RunOptions{Resume: id})
	if !res.OK || res.Text != "finished" || f.srv.Count() != 1 {
		t.Fatalf("result %+v after %d requests", res, f.srv.Count())
	}
	if got := lastUserText(f.srv.Requests()[0]); !strings.HasPrefix(got, "R:") || strings.Contains(got, "interrupted") {
		t.Fatalf("the pending Write was not run: %q", got)
	}
	if len(f.eventLines(event.Retry)) != 1 {
		t.Fatal("no retry event for the ambiguous call")
	}
}

func TestPanickingSinkNeverHarmsTheRun(t *testing.T) { // R6.9
	f := newFixture(t, modeltest.Script(modeltest.Turn{Text: "fine"}))
	res := f.rt.Run(context.Background(), agent.Spec{Model: "claude-sonnet-4-6"}, "go",
		agent.RunOptions{Sink: func(event.Event) { panic("bad sink") }})
	if !res.OK {
		t.Fatalf("result = %+v", res)
	}
}
