package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
// until its context is cancelled: a pure call (a read, a question waiting
// for the person) cut in the middle.
type blockTool struct {
	rt   func() *agent.Runtime
	text string
}

func (*blockTool) Name() string            { return "Block" }
func (*blockTool) Description() string     { return "blocks" }
func (*blockTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (*blockTool) Class() tool.Class       { return tool.Pure }
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
	if got := f.kinds(res.SessionID); got != "user assistant tool_result interrupt" {
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
	use := &model.ToolUse{ID: "toolu_w", Name: "Write", Input: json.RawMessage(`{"file_path":"a.txt","content":"A"}`)}
	f.crashed(id, "write a", use, store.Entry{UUID: "e3", Parent: "e2", Kind: store.KindOpStarted, Op: &store.Op{ID: "toolu_w", Tool: "Write"}})
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

// TestInterruptAndNoteAreOneWrite: the interrupt record and the person's
// note commit together, so no kill can keep one without the other (R2.8,
// issue 9).
func TestInterruptAndNoteAreOneWrite(t *testing.T) {
	b := &blockTool{text: "write a poem instead"}
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Block", `{}`)}},
		modeltest.Turn{Text: "A poem."},
	), b)
	fs := withFaultStore(f, agent.Options{Tools: []tool.Tool{b}})
	b.rt = func() *agent.Runtime { return f.rt }
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if !res.OK {
		t.Fatalf("result = %+v", res)
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	// A pure call's held result may ride in front of them (issue 12).
	for _, kinds := range fs.batches {
		if i := slices.Index(kinds, store.KindInterrupt); i >= 0 {
			if len(kinds) != i+2 || kinds[i+1] != store.KindUser {
				t.Fatalf("interrupt batch = %v, want it to end [interrupt user]", kinds)
			}
			return
		}
	}
	t.Fatalf("no interrupt batch in %v", fs.batches)
}

// TestInterruptFailsWhole: when the write fails, neither the record nor
// the note is stored, and the run fails with the store's error.
func TestInterruptFailsWhole(t *testing.T) {
	b := &blockTool{text: "write a poem instead"}
	f := newFixture(t, modeltest.Script(modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Block", `{}`)}}), b)
	fs := withFaultStore(f, agent.Options{Tools: []tool.Tool{b}})
	b.rt = func() *agent.Runtime { return f.rt }
	fs.setFail(func(b store.Batch) error {
		for _, e := range b.Entries {
			if e.Kind == store.KindInterrupt {
				return errDiskFull
			}
		}
		return nil
	})
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if res.Stop != agent.StopFailed || !errors.Is(res.Err, errDiskFull) {
		t.Fatalf("result = %+v", res)
	}
	// The pure call's held result rode in the failed batch: the call is
	// pending again, and a resume runs it (it is pure).
	if got := f.kinds(res.SessionID); got != "user assistant" {
		t.Fatalf("entries = %q", got)
	}
}

// TestLostNoteIsDelivered: an older build wrote the interrupt and its note
// in two writes and was killed between them; resume gives the model the
// note the interrupt promised.
func TestLostNoteIsDelivered(t *testing.T) {
	f := newFixture(t, modeltest.Script(modeltest.Turn{Text: "A poem."}))
	id := "11111111-2222-3333-4444-cccccccccccc"
	storeHistory(t, f, id, userEntry("go"), callEntry("toolu_g", "Glob", `{"pattern":"*"}`),
		opEntry(store.KindResult, "toolu_g", "Glob"), store.Entry{Kind: store.KindInterrupt, Text: "write a poem"})
	res := f.run(agent.Spec{}, "", agent.RunOptions{Resume: id})
	if !res.OK || res.Text != "A poem." || f.srv.Count() != 1 {
		t.Fatalf("result = %+v after %d requests", res, f.srv.Count())
	}
	if got := lastUserText(f.srv.Requests()[0]); !strings.HasSuffix(got, "T:write a poem;") {
		t.Fatalf("last message %q", got)
	}
}

// TestBareResumeAfterStop: a run stopped by an interrupt without text
// continues its work on a bare resume; one stopped after the model had
// ended its turn has nothing left to do (R2.8, R3.1).
func TestBareResumeAfterStop(t *testing.T) {
	b := &blockTool{}
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Block", `{}`)}},
		modeltest.Turn{Text: "picked up again"},
	), b)
	b.rt = func() *agent.Runtime { return f.rt }
	first := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if first.Stop != agent.StopInterrupted {
		t.Fatalf("first = %+v", first)
	}
	again := f.run(agent.Spec{}, "", agent.RunOptions{Resume: first.SessionID})
	if !again.OK || again.Text != "picked up again" || f.srv.Count() != 2 {
		t.Fatalf("bare resume = %+v after %d requests", again, f.srv.Count())
	}

	id := "11111111-2222-3333-4444-dddddddddddd"
	storeHistory(t, f, id, userEntry("go"), store.Entry{Kind: store.KindAssistant,
		Message: &model.Message{Role: model.Assistant, Content: []model.Block{&model.Text{Text: "all done"}}}},
		store.Entry{Kind: store.KindInterrupt})
	done := f.run(agent.Spec{}, "", agent.RunOptions{Resume: id})
	if !done.OK || done.Text != "all done" || f.srv.Count() != 2 {
		t.Fatalf("bare resume of an ended turn = %+v after %d requests", done, f.srv.Count())
	}
}

// effectTool interrupts the runtime while it runs, then finishes its work:
// it records whether its context was cancelled meanwhile.
type effectTool struct {
	rt     func() *agent.Runtime
	cancel bool // its context was done when it finished
}

func (*effectTool) Name() string            { return "Effect" }
func (*effectTool) Description() string     { return "has an effect" }
func (*effectTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (*effectTool) Class() tool.Class       { return tool.Effect }
func (e *effectTool) Run(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
	e.rt().Interrupt("now do the other thing")
	e.cancel = ctx.Err() != nil
	return tool.Result{Content: "effect done"}, nil
}

// An interrupt never kills a running effect (seed 004, issue 11): the
// effect finishes and its real result is stored; the calls after it in the
// same response are answered as cut without running; the run goes on with
// the person's text.
func TestInterruptLetsTheRunningEffectFinish(t *testing.T) {
	e := &effectTool{}
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Effect", `{}`), call("Write", `{"file_path":"x.txt","content":"x"}`)}},
		modeltest.Turn{Text: "Other thing done."},
	), e)
	e.rt = func() *agent.Runtime { return f.rt }
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if !res.OK || res.Text != "Other thing done." {
		t.Fatalf("result = %+v", res)
	}
	if e.cancel {
		t.Error("the interrupt cancelled the running effect")
	}
	got := lastUserText(f.srv.Requests()[1])
	if !strings.HasPrefix(got, "R:effect done;R:"+view.Interrupted) || !strings.HasSuffix(got, "T:now do the other thing;") {
		t.Fatalf("request after interrupt ends with %q", got)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "x.txt")); err == nil {
		t.Error("the Write after the interrupted effect ran")
	}
	evs := f.eventLines(event.Interrupt)
	if len(evs) != 1 {
		t.Fatalf("interrupt events %v", evs)
	}
}

// An interrupt cuts a model answer while it streams, at once, and says so.
func TestInterruptCutsAStreamingAnswer(t *testing.T) {
	var f *fixture
	f = newFixture(t, modeltest.Script(
		modeltest.Turn{Text: "a long answer that is being streamed slowly", Pace: func(ctx context.Context, n int) {
			if n == 1 {
				f.rt.Interrupt("stop, shorter please")
				<-ctx.Done() // the client went away: the stream was cut
			}
		}},
		modeltest.Turn{Text: "Short."},
	))
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if !res.OK || res.Text != "Short." || res.Attempts != 1 {
		t.Fatalf("result = %+v", res)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var cut, deltas bool
	for _, e := range f.events {
		cut = cut || (e.Kind == event.Interrupt && e.Payload["model_cut"] == true)
		deltas = deltas || e.Kind == event.Delta
	}
	if !cut || !deltas {
		t.Errorf("interrupt marked model_cut: %v; deltas seen: %v", cut, deltas)
	}
}

// TestInterruptCutsACallTheResumeRuns: a question a crash left unanswered
// is asked again when the session resumes (resume.Plan.Pending); an
// interrupt while it waits cuts it and stops the run, as it does a call of
// any turn, instead of waiting for an answer (issue 23). On the old code
// the call ran outside a turn and the interrupt could not reach it.
func TestInterruptCutsACallTheResumeRuns(t *testing.T) {
	b := &blockTool{}
	f := newFixture(t, modeltest.Script(modeltest.Turn{Text: "never asked"}), b)
	b.rt = func() *agent.Runtime { return f.rt }
	id := "11111111-2222-3333-4444-666666666666"
	f.crashed(id, "ask me", &model.ToolUse{ID: "toolu_b", Name: "Block", Input: json.RawMessage(`{}`)})
	res := f.run(agent.Spec{}, "", agent.RunOptions{Resume: id})
	if res.OK || res.Error != "interrupted" || f.srv.Count() != 0 {
		t.Fatalf("result = %+v after %d requests", res, f.srv.Count())
	}
	if got := f.kinds(id); got != "user assistant tool_result interrupt" {
		t.Fatalf("entries = %q", got)
	}
}

// crashed stores what a process killed right after a response became
// durable leaves of session id: the prompt (e1), the response asking for
// use (e2), and then more; crashed gives every entry the session's key.
func (f *fixture) crashed(id, prompt string, use *model.ToolUse, more ...store.Entry) {
	f.t.Helper()
	key := store.SessionKey(f.ws, id)
	entries := append([]store.Entry{
		{UUID: "e1", Kind: store.KindUser, Message: &model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: prompt}}}},
		{UUID: "e2", Parent: "e1", Kind: store.KindAssistant, Message: &model.Message{Role: model.Assistant, Content: []model.Block{use}}},
	}, more...)
	for i := range entries {
		entries[i].Key = key
	}
	ctx := context.Background()
	if err := f.rt.Store().Append(ctx, entries...); err != nil {
		f.t.Fatal(err)
	}
	if err := f.rt.Store().PutMeta(ctx, store.Meta{Key: key}); err != nil {
		f.t.Fatal(err)
	}
}
