package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/tool"
)

// fixture is a runtime over a real SQLite store in a temp dir, talking to a
// fake Anthropic server through the official SDK.
type fixture struct {
	t      *testing.T
	ws     string
	srv    *modeltest.Server
	rt     *agent.Runtime
	mu     sync.Mutex // guards events
	events []event.Event
}

func newFixture(t *testing.T, respond modeltest.Responder, extra ...tool.Tool) *fixture {
	t.Helper()
	f := &fixture{t: t, ws: t.TempDir()}
	f.srv = modeltest.NewAnthropic(respond)
	t.Cleanup(f.srv.Close)
	f.rt = f.runtime(extra...)
	return f
}

func (f *fixture) runtime(extra ...tool.Tool) *agent.Runtime {
	f.t.Helper()
	return f.runtimeWith(agent.Options{Tools: extra})
}

// runtimeWith builds a runtime from opts, filling in the fixture's
// workspace, run dir and provider.
func (f *fixture) runtimeWith(opts agent.Options) *agent.Runtime {
	f.t.Helper()
	opts.Workspace = f.ws
	if opts.Store == nil {
		opts.Store = openStore(f.t, f.ws) // a new handle, as a new process has
	}
	opts.Provider = anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: f.srv.URL})
	rt, err := agent.New(opts)
	if err != nil {
		f.t.Fatal(err)
	}
	return rt
}

func (f *fixture) sink(e event.Event) {
	f.mu.Lock()
	f.events = append(f.events, e)
	f.mu.Unlock()
}

func (f *fixture) run(spec agent.Spec, prompt string, opts agent.RunOptions) agent.Result {
	f.t.Helper()
	opts.Sink = f.sink
	if spec.Model == "" {
		spec.Model = "claude-sonnet-4-6"
	}
	return f.rt.Run(context.Background(), spec, prompt, opts)
}

func (f *fixture) entries(id string) []store.Entry {
	f.t.Helper()
	es, err := f.rt.Store().Load(context.Background(), store.SessionKey(f.ws, id))
	if err != nil {
		f.t.Fatal(err)
	}
	return es
}

func (f *fixture) kinds(id string) string {
	var ks []string
	for _, e := range f.entries(id) {
		ks = append(ks, string(e.Kind))
	}
	return strings.Join(ks, " ")
}

func (f *fixture) eventLines(kind event.Kind) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, e := range f.events {
		if e.Kind == kind {
			out = append(out, e.String())
		}
	}
	return out
}

func call(name, input string) modeltest.ToolCall {
	return modeltest.ToolCall{Name: name, Input: input}
}

// lastUserText is the text the request's last user message carries.
func lastUserText(r *modeltest.Request) string {
	m := r.Messages[len(r.Messages)-1]
	s := ""
	for _, b := range m.Content {
		switch v := b.(type) {
		case *model.Text:
			s += "T:" + v.Text + ";"
		case *model.ToolResult:
			s += "R:" + v.Content + ";"
		}
	}
	return s
}

func TestRunToolsStoresEveryEntry(t *testing.T) { // R2.3, R5.1
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{Text: "Writing.", ToolCalls: []modeltest.ToolCall{call("Write", `{"file_path":"hello.txt","content":"hello\n"}`)}},
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Read", `{"file_path":"hello.txt"}`)}},
		modeltest.Turn{Text: "Done: hello.txt says hello."},
	))
	res := f.run(agent.Spec{Name: "t"}, "create hello.txt", agent.RunOptions{})
	if !res.OK || res.Turns != 3 || res.Text != "Done: hello.txt says hello." {
		t.Fatalf("result = %+v", res)
	}
	data, err := os.ReadFile(filepath.Join(f.ws, "hello.txt"))
	if err != nil || string(data) != "hello\n" {
		t.Fatalf("hello.txt = %q, %v", data, err)
	}
	want := "user assistant op_started tool_result assistant tool_result assistant"
	if got := f.kinds(res.SessionID); got != want {
		t.Fatalf("entries = %q, want %q", got, want)
	}
	if got := f.eventLines(event.ToolCall); len(got) != 2 || got[0] != "[Write] hello.txt" {
		t.Fatalf("tool_call events = %q", got)
	}
	if got := f.eventLines(event.Init); len(got) != 1 {
		t.Fatalf("init events = %q", got)
	}
	reqs := f.srv.Requests()
	if got := lastUserText(reqs[2]); !strings.Contains(got, "hello") {
		t.Fatalf("third request's last message = %q, want the Read result", got)
	}
	if res.Cost <= 0 || res.Context <= 0 || f.rt.TotalCost() != res.Cost {
		t.Fatalf("cost %v context %d total %v", res.Cost, res.Context, f.rt.TotalCost())
	}
}

func TestEntriesChainByParent(t *testing.T) { // R2.7
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Glob", `{"pattern":"*"}`)}},
		modeltest.Turn{Text: "ok"},
	))
	res := f.run(agent.Spec{}, "look", agent.RunOptions{})
	es := f.entries(res.SessionID)
	for i, e := range es {
		if i == 0 && e.Parent != "" || i > 0 && e.Parent != es[i-1].UUID {
			t.Fatalf("entry %d parent %q breaks the chain", i, e.Parent)
		}
	}
}

func TestResumeSendsFullHistory(t *testing.T) { // issue 2: --resume continues with its full history
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{Text: "first answer"},
		modeltest.Turn{Text: "second answer"},
	))
	first := f.run(agent.Spec{}, "first question", agent.RunOptions{})
	second := f.run(agent.Spec{}, "second question", agent.RunOptions{Resume: first.SessionID})
	if !second.OK || second.SessionID != first.SessionID || !second.Resumed {
		t.Fatalf("second = %+v", second)
	}
	msgs := f.srv.Requests()[1].Messages
	if len(msgs) != 3 || msgs[0].TextOf() != "first question" || msgs[1].TextOf() != "first answer" || msgs[2].TextOf() != "second question" {
		t.Fatalf("resumed request messages = %+v", msgs)
	}
}

func TestResumeUnknownSession(t *testing.T) {
	f := newFixture(t, modeltest.Script())
	res := f.run(agent.Spec{}, "x", agent.RunOptions{Resume: "no-such-session"})
	if res.OK || !strings.Contains(res.Error, "no session") || f.srv.Count() != 0 {
		t.Fatalf("result = %+v, requests %d", res, f.srv.Count())
	}
}

func TestForkLeavesOriginalUntouched(t *testing.T) { // R2.2 fork
	f := newFixture(t, modeltest.Script(modeltest.Turn{Text: "a"}, modeltest.Turn{Text: "b"}))
	orig := f.run(agent.Spec{}, "one", agent.RunOptions{})
	before := f.kinds(orig.SessionID)
	fork := f.run(agent.Spec{}, "two", agent.RunOptions{Resume: orig.SessionID, Fork: true})
	if fork.SessionID == orig.SessionID || !fork.OK {
		t.Fatalf("fork = %+v", fork)
	}
	if got := f.kinds(orig.SessionID); got != before {
		t.Fatalf("original changed: %q -> %q", before, got)
	}
	if got := len(f.srv.Requests()[1].Messages); got != 3 {
		t.Fatalf("fork request has %d messages, want the original's 2 plus 1", got)
	}
}

// probeTool checks, when it runs, that its call is already durable.
type probeTool struct {
	f    *fixture
	seen string
}

func (*probeTool) Name() string            { return "Probe" }
func (*probeTool) Description() string     { return "probe" }
func (*probeTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (*probeTool) Class() tool.Class       { return tool.Effect }
func (p *probeTool) Run(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
	metas, _ := p.f.rt.Store().Sessions(ctx, store.ProjectKey(p.f.ws))
	es, _ := p.f.rt.Store().Load(ctx, metas[0].Key)
	for _, e := range es {
		p.seen += string(e.Kind) + " "
	}
	return tool.Result{Content: "probed"}, nil
}

func TestWriteAheadBeforeEffect(t *testing.T) { // R5.1, DESIGN §3.1
	p := &probeTool{}
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Probe", `{}`)}},
		modeltest.Turn{Text: "ok"},
	), p)
	p.f = f
	f.run(agent.Spec{}, "go", agent.RunOptions{})
	if want := "user assistant op_started "; p.seen != want {
		t.Fatalf("durable when the effect ran: %q, want %q", p.seen, want)
	}
}

func TestDeniedToolIsRecordedNotRun(t *testing.T) { // R2.4
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Write", `{"file_path":"x.txt","content":"x"}`)}},
		modeltest.Turn{Text: "ok"},
	))
	res := f.run(agent.Spec{Tools: []string{"Read"}}, "go", agent.RunOptions{})
	if _, err := os.Stat(filepath.Join(f.ws, "x.txt")); !os.IsNotExist(err) {
		t.Fatal("a denied Write wrote its file")
	}
	var op *store.Op
	for _, e := range f.entries(res.SessionID) {
		if e.Kind == store.KindResult {
			op = e.Op
		}
		if e.Kind == store.KindOpStarted {
			t.Fatal("a denied call got an intent")
		}
	}
	if op == nil || !op.Denied || !op.IsError || !strings.Contains(op.Content, "denied") {
		t.Fatalf("denial entry = %+v", op)
	}
	if got := f.eventLines(event.Denied); len(got) != 1 {
		t.Fatalf("denied events = %q", got)
	}
	if tools := f.srv.Requests()[0].Tools; len(tools) != 1 || tools[0] != "Read" {
		t.Fatalf("tools offered = %v, want only Read", tools)
	}
}

func TestMalformedToolInputIsAnErrorResult(t *testing.T) { // issue 2: bad input
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Write", `{"file_path":"x.txt"}`), call("Nope", `{}`)}},
		modeltest.Turn{Text: "recovered"},
	))
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if !res.OK || res.Text != "recovered" {
		t.Fatalf("result = %+v", res)
	}
	got := lastUserText(f.srv.Requests()[1])
	if !strings.Contains(got, "content") || !strings.Contains(got, "No tool named") {
		t.Fatalf("results sent = %q", got)
	}
}

func TestMaxTurnsAndBudget(t *testing.T) {
	loop := func(*modeltest.Request) modeltest.Turn {
		return modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Glob", `{"pattern":"*"}`)},
			Usage: &model.Usage{Input: 100_000, Output: 1000}}
	}
	f := newFixture(t, loop)
	res := f.run(agent.Spec{MaxTurns: 3}, "go", agent.RunOptions{})
	if res.OK || res.Turns != 3 || !strings.Contains(res.Error, "max turns") {
		t.Fatalf("max turns: %+v", res)
	}
	res = f.run(agent.Spec{MaxBudget: 0.5}, "go", agent.RunOptions{})
	if res.OK || res.Turns != 2 || !strings.Contains(res.Error, "budget") {
		t.Fatalf("budget: %+v", res) // $0.315 a turn at sonnet prices
	}
}

func TestCallsCutAtMaxTokensAreNotRun(t *testing.T) {
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{Stop: "max_tokens", ToolCalls: []modeltest.ToolCall{call("Write", `{"file_path":"x.txt","content":"x"}`)}},
		modeltest.Turn{Text: "retrying smaller"},
	))
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if _, err := os.Stat(filepath.Join(f.ws, "x.txt")); !os.IsNotExist(err) {
		t.Fatal("a call cut at max_tokens ran")
	}
	if !res.OK || !strings.Contains(lastUserText(f.srv.Requests()[1]), "output token limit") {
		t.Fatalf("result %+v; sent %q", res, lastUserText(f.srv.Requests()[1]))
	}
}

func TestTrimOnResumeSpillsToWorkbench(t *testing.T) { // R4.6
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Bash", `{"command":"seq 1 3000"}`)}},
		modeltest.Turn{Text: "counted"},
		modeltest.Turn{Text: "again"},
	))
	first := f.run(agent.Spec{}, "count", agent.RunOptions{})
	f.rt = f.runtimeWith(agent.Options{Trim: true})
	second := f.run(agent.Spec{}, "and now?", agent.RunOptions{Resume: first.SessionID})
	if !second.OK {
		t.Fatalf("second = %+v", second)
	}
	body := string(f.srv.Requests()[2].Body)
	if strings.Contains(body, "\n2999\n") || !strings.Contains(body, ".flower/results/") {
		t.Fatalf("old output not trimmed in the resumed request")
	}
	matches, _ := filepath.Glob(filepath.Join(f.ws, ".flower", "results", "*.txt"))
	if len(matches) != 1 {
		t.Fatalf("spilled files: %v", matches)
	}
	data, _ := os.ReadFile(matches[0])
	if !strings.Contains(string(data), "\n2999\n") {
		t.Fatal("the spilled file lacks the full output")
	}
}

// TestTornSpillFileIsWrittenAgain: spill files are written without an
// fsync (issue 12), so a machine crash before the process synced and
// listed them (.sealed) may leave one torn at its full size (zeros) or
// empty, with no list or a torn one. A later process compares the file
// with the store's text and writes it again.
func TestTornSpillFileIsWrittenAgain(t *testing.T) {
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Bash", `{"command":"seq 1 3000"}`)}},
		modeltest.Turn{Text: "counted"},
		modeltest.Turn{Text: "again"},
		modeltest.Turn{Text: "and again"},
		modeltest.Turn{Text: "once more"},
	))
	first := f.run(agent.Spec{}, "count", agent.RunOptions{})
	seal := filepath.Join(f.ws, ".flower", "results", ".sealed")
	for i, tear := range []func([]byte) []byte{
		func(b []byte) []byte { return make([]byte, len(b)) }, // the right size, zeros
		func([]byte) []byte { return nil },                    // empty
	} {
		f.rt = f.runtimeWith(agent.Options{Trim: true})
		if res := f.run(agent.Spec{}, "and now?", agent.RunOptions{Resume: first.SessionID}); !res.OK {
			t.Fatalf("resume = %+v", res)
		}
		matches, _ := filepath.Glob(filepath.Join(f.ws, ".flower", "results", "*.txt"))
		if len(matches) != 1 {
			t.Fatalf("spilled files: %v", matches)
		}
		data, _ := os.ReadFile(matches[0])
		if !strings.Contains(string(data), "\n2999\n") {
			t.Fatal("the spilled file lacks the full output")
		}
		if err := os.WriteFile(matches[0], tear(data), 0o644); err != nil {
			t.Fatal(err)
		}
		list, err := os.ReadFile(seal)
		if err != nil || !strings.Contains(string(list), filepath.Base(matches[0])) {
			t.Fatalf("the spill file is not listed as synced: %q, %v", list, err)
		}
		if i == 0 { // the crash came before the list was written
			err = os.Remove(seal)
		} else { // or while it was: torn
			err = os.WriteFile(seal, append(list[:len(list)-3], "00\n"...), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	f.rt = f.runtimeWith(agent.Options{Trim: true})
	if res := f.run(agent.Spec{}, "last", agent.RunOptions{Resume: first.SessionID}); !res.OK {
		t.Fatalf("last resume = %+v", res)
	}
	matches, _ := filepath.Glob(filepath.Join(f.ws, ".flower", "results", "*.txt"))
	if data, _ := os.ReadFile(matches[0]); !strings.Contains(string(data), "\n2999\n") {
		t.Fatal("the torn spill file was not written again")
	}
}

// openStore opens the workspace's store as flower does, closed when the
// test ends.
func openStore(t *testing.T, ws string) store.Store {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(ws, "runs", "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
