package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
)

// faultStore wraps a store: it records every batch committed and fails
// those that fail says to fail (a full disk, say). Bindings are recorded
// and not passed on, so tests of the agent do not depend on a backend's
// run state.
type faultStore struct {
	store.Store
	mu      sync.Mutex
	batches [][]store.Kind
	binds   []string // "step=session: kinds of the entries committed with it"
	fail    func(b store.Batch) error
}

func (s *faultStore) Commit(ctx context.Context, b store.Batch) error {
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		if err := fail(b); err != nil {
			return err
		}
	}
	bind := b.Bind
	b.Bind = nil
	if err := s.Store.Commit(ctx, b); err != nil {
		return err
	}
	var kinds []store.Kind
	var names []string
	for _, e := range b.Entries {
		kinds = append(kinds, e.Kind)
		names = append(names, string(e.Kind))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches = append(s.batches, kinds)
	for _, bd := range bind {
		s.binds = append(s.binds, bd.Step+"="+bd.Session+": "+strings.Join(names, " "))
	}
	return nil
}

func (s *faultStore) setFail(f func(b store.Batch) error) {
	s.mu.Lock()
	s.fail = f
	s.mu.Unlock()
}

// withFaultStore gives the fixture a runtime over a faultStore of its own
// SQLite store.
func withFaultStore(f *fixture, opts agent.Options) *faultStore {
	fs := &faultStore{Store: f.rt.Store()}
	opts.Store = fs
	f.rt = f.runtimeWith(opts)
	return fs
}

var errDiskFull = errors.New("disk full")

// resultsFail fails every batch holding a tool result.
func resultsFail(b store.Batch) error {
	for _, e := range b.Entries {
		if e.Kind == store.KindResult {
			return errDiskFull
		}
	}
	return nil
}

// countTool is a side-effecting tool that counts its executions.
type countTool struct{ n atomic.Int32 }

func (*countTool) Name() string            { return "Count" }
func (*countTool) Description() string     { return "counts" }
func (*countTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (*countTool) Class() tool.Class       { return tool.Effect }
func (c *countTool) Run(context.Context, json.RawMessage) (tool.Result, error) {
	c.n.Add(1)
	return tool.Result{Content: "counted"}, nil
}

// TestDiskFullNeverRunsACallMoreThanTwice is issue 9's full disk: a result
// that cannot be appended fails the run, and retrying the step in-process
// (resuming the same session) runs the call once more at most, since the
// count is in the store (R5.7).
func TestDiskFullNeverRunsACallMoreThanTwice(t *testing.T) {
	c := &countTool{}
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{{ID: "toolu_c", Name: "Count", Input: `{}`}}},
		modeltest.Turn{Text: "finished"},
	), c)
	fs := withFaultStore(f, agent.Options{Tools: []tool.Tool{c}})
	fs.setFail(resultsFail)
	res := f.run(agent.Spec{Name: "work"}, "count", agent.RunOptions{})
	if res.Stop != agent.StopFailed || !errors.Is(res.Err, errDiskFull) || c.n.Load() != 1 {
		t.Fatalf("first run: %+v, %d runs", res, c.n.Load())
	}
	id := res.SessionID
	for i := 0; i < 3; i++ { // the workflow retries the step, the disk still full
		res = f.run(agent.Spec{Name: "work"}, "", agent.RunOptions{Resume: id})
		if res.Stop != agent.StopFailed || !errors.Is(res.Err, errDiskFull) {
			t.Fatalf("retry %d: %+v", i, res)
		}
	}
	if got := c.n.Load(); got != resume.MaxRuns {
		t.Fatalf("the call ran %d times, want %d", got, resume.MaxRuns)
	}
	fs.setFail(nil) // space again
	res = f.run(agent.Spec{Name: "work"}, "", agent.RunOptions{Resume: id})
	if !res.OK || res.Text != "finished" || c.n.Load() != resume.MaxRuns || f.srv.Count() != 2 {
		t.Fatalf("after the disk is freed: %+v, %d runs, %d requests", res, c.n.Load(), f.srv.Count())
	}
	if got := lastUserText(f.srv.Requests()[1]); !strings.Contains(got, "Count call (toolu_c)") {
		t.Fatalf("the model was not told which call was given up: %q", got)
	}
	if got := f.kinds(id); got != "user assistant op_started op_attempt tool_result assistant" {
		t.Fatalf("entries = %q", got)
	}
}

// storeHistory appends a session of entries under id, chained, and its
// meta: what a killed process leaves behind.
func storeHistory(t *testing.T, f *fixture, id string, entries ...store.Entry) {
	t.Helper()
	key := store.SessionKey(f.ws, id)
	appendChain(t, f.rt.Store(), key, entries...)
	if err := f.rt.Store().PutMeta(context.Background(), store.Meta{Key: key}); err != nil {
		t.Fatal(err)
	}
}

func appendChain(t *testing.T, s store.Store, key string, entries ...store.Entry) {
	t.Helper()
	parent := ""
	for i := range entries {
		e := &entries[i]
		if e.UUID == "" {
			e.UUID = key + "#" + string(rune('a'+i))
		}
		e.Key, e.Parent = key, parent
		parent = e.UUID
	}
	if err := s.Append(context.Background(), entries...); err != nil {
		t.Fatal(err)
	}
}

func userEntry(text string) store.Entry {
	return store.Entry{Kind: store.KindUser, Message: &model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: text}}}}
}

func callEntry(id, name, input string) store.Entry {
	return store.Entry{Kind: store.KindAssistant, Message: &model.Message{Role: model.Assistant,
		Content: []model.Block{&model.ToolUse{ID: id, Name: name, Input: json.RawMessage(input)}}}}
}

func opEntry(kind store.Kind, id, name string) store.Entry {
	return store.Entry{Kind: kind, Op: &store.Op{ID: id, Tool: name}}
}

// TestPoisonCallIsNeverRunAThirdTime: a call whose intent and one retry
// both ended without a result (it killed flower twice, say) is answered
// with a note naming it, never run again, and an event says so (R5.7).
func TestPoisonCallIsNeverRunAThirdTime(t *testing.T) {
	c := &countTool{}
	f := newFixture(t, modeltest.Script(modeltest.Turn{Text: "noted"}), c)
	id := "11111111-2222-3333-4444-777777777777"
	storeHistory(t, f, id, userEntry("count"), callEntry("toolu_p", "Count", `{}`),
		opEntry(store.KindOpStarted, "toolu_p", "Count"), opEntry(store.KindAttempt, "toolu_p", "Count"))
	res := f.run(agent.Spec{Name: "work"}, "", agent.RunOptions{Resume: id})
	if !res.OK || c.n.Load() != 0 || f.srv.Count() != 1 {
		t.Fatalf("result %+v, %d runs, %d requests", res, c.n.Load(), f.srv.Count())
	}
	if got := lastUserText(f.srv.Requests()[0]); !strings.Contains(got, "Count call (toolu_p)") {
		t.Fatalf("the model was not told: %q", got)
	}
	ev := f.eventLines(event.Retry)
	if len(ev) != 1 || !strings.Contains(ev[0], "exhausted") || !strings.Contains(ev[0], "toolu_p") {
		t.Fatalf("retry events = %q", ev)
	}
}

// TestRetryRecordsTheAttemptBeforeItRuns: the op_attempt entry is durable
// when the re-execution starts (DESIGN §3.1, R5.7).
func TestRetryRecordsTheAttemptBeforeItRuns(t *testing.T) {
	p := &probeTool{}
	f := newFixture(t, modeltest.Script(modeltest.Turn{Text: "ok"}), p)
	p.f = f
	id := "11111111-2222-3333-4444-888888888888"
	storeHistory(t, f, id, userEntry("probe"), callEntry("toolu_p", "Probe", `{}`),
		opEntry(store.KindOpStarted, "toolu_p", "Probe"))
	res := f.run(agent.Spec{}, "", agent.RunOptions{Resume: id})
	if want := "user assistant op_started op_attempt "; !res.OK || p.seen != want {
		t.Fatalf("durable when the retry ran: %q, want %q (%+v)", p.seen, want, res)
	}
}

// peekTool is a pure tool that counts its executions.
type peekTool struct{ n atomic.Int32 }

func (*peekTool) Name() string            { return "Peek" }
func (*peekTool) Description() string     { return "peeks" }
func (*peekTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (*peekTool) Class() tool.Class       { return tool.Pure }
func (p *peekTool) Run(context.Context, json.RawMessage) (tool.Result, error) {
	p.n.Add(1)
	return tool.Result{Content: "peeked"}, nil
}

// TestHeldPureResultsAreRunAgainWhenLost: a pure result rides along with
// the next effect's result; one made after the last effect rides with the
// next response. A crash (here a commit that fails) before that commit
// loses only the pure result and the response: the resume runs that call
// again, never the effect, and asks the model again, as after any crash
// during a model call (issue 12).
func TestHeldPureResultsAreRunAgainWhenLost(t *testing.T) {
	c, p := &countTool{}, &peekTool{}
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{{ID: "toolu_p1", Name: "Peek", Input: `{}`},
			{ID: "toolu_c", Name: "Count", Input: `{}`}, {ID: "toolu_p2", Name: "Peek", Input: `{}`}}},
		modeltest.Turn{Text: "finished"},
		modeltest.Turn{Text: "finished"},
	), c, p)
	fs := withFaultStore(f, agent.Options{Tools: []tool.Tool{c, p}})
	fs.setFail(func(b store.Batch) error { // the commit of toolu_p2's result with the next response
		if len(b.Entries) == 2 && b.Entries[0].Op != nil && b.Entries[0].Op.ID == "toolu_p2" {
			return errDiskFull
		}
		return nil
	})
	res := f.run(agent.Spec{Name: "work"}, "look", agent.RunOptions{})
	if !errors.Is(res.Err, errDiskFull) || c.n.Load() != 1 || p.n.Load() != 2 {
		t.Fatalf("first run: %+v, %d effect runs, %d pure runs", res, c.n.Load(), p.n.Load())
	}
	fs.setFail(nil)
	res = f.run(agent.Spec{Name: "work"}, "", agent.RunOptions{Resume: res.SessionID})
	if !res.OK || c.n.Load() != 1 || p.n.Load() != 3 || f.srv.Count() != 3 {
		t.Fatalf("resume: %+v, %d effect runs, %d pure runs, %d requests", res, c.n.Load(), p.n.Load(), f.srv.Count())
	}
	want := "user assistant op_started tool_result tool_result tool_result assistant"
	if got := f.kinds(res.SessionID); got != want {
		t.Fatalf("entries = %q, want %q", got, want)
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if got := fmt.Sprint(fs.batches); !strings.Contains(got, "[tool_result tool_result]") {
		t.Fatalf("the first pure result was not committed with the effect's: batches %s", got)
	}
}
