package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	mcpserver "github.com/flower-run/flower/front/mcp"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
)

// The tests run flower in process under the Go SDK's client, over an
// in-memory transport. They set the environment (HOME, the fake model's
// address), so none runs in parallel.

// env gives the test a home of its own and returns the Options of a
// server whose run dirs live in the test's state directory.
func env(t testing.TB, model string) mcpserver.Options {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("FLOWER_MODEL", "")
	return mcpserver.Options{Model: model, Version: "test"}
}

// session is one client session with a server, served by Run.
type session struct {
	*sdk.ClientSession
	ran chan error // Run's error, once the session is over
}

// connect serves a session of s to the SDK's client.
func connect(t testing.TB, s *mcpserver.Server) *session {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ran := make(chan error, 1)
	go func() { ran <- s.Run(context.Background(), st) }()
	client := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	ss := &session{ClientSession: cs, ran: ran}
	t.Cleanup(func() { ss.end(t) })
	return ss
}

// end closes the client's side, as a client that exits does, and waits
// for Run to have stopped the tasks.
func (s *session) end(t testing.TB) {
	t.Helper()
	_ = s.Close()
	select {
	case err, ok := <-s.ran:
		if !ok {
			return // ended already
		}
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		close(s.ran)
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after the session ended")
	}
}

// call calls a tool; it returns the result's text, and decodes its
// structured content into out when out is not nil.
func (s *session) call(t testing.TB, name string, args map[string]any, out any) (text string, isErr bool) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text += tc.Text
		}
	}
	if out != nil && !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v: %s", name, err, b)
		}
	}
	return text, res.IsError
}

func (s *session) status(t testing.TB, dir string) mcpserver.Status {
	t.Helper()
	var st mcpserver.Status
	if text, isErr := s.call(t, "task_status", map[string]any{"directory": dir}, &st); isErr {
		t.Fatalf("task_status: %s", text)
	}
	return st
}

// waitState follows the task until it is in one of the states, each
// look waiting on the server side for the next event.
func (s *session) waitState(t testing.TB, dir string, want ...string) mcpserver.Status {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		st := s.status(t, dir)
		if slices.Contains(want, st.State) {
			return st
		}
		if st.State != mcpserver.StateRunning && st.State != mcpserver.StateWaiting {
			t.Fatalf("the task is %s, want %v: %s", st.State, want, st.Message)
		}
		s.call(t, "task_events", map[string]any{"directory": dir, "after": st.LastSeq, "wait_s": 10}, nil)
	}
	text, _ := s.call(t, "task_events", map[string]any{"directory": dir}, nil)
	t.Fatalf("the task never became %v: %+v\n%s", want, s.status(t, dir), text)
	return mcpserver.Status{}
}

// TestDemoTask runs a task on the demo model to its verdict: the six
// tools, task_status structured, task_events without deltas or usage
// unless asked, and a start with nothing to continue.
func TestDemoTask(t *testing.T) {
	s := mcpserver.New(env(t, "demo"))
	cs := connect(t, s)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Name == "task_start" && !strings.Contains(tl.Description, "task_start again") {
			t.Errorf("task_start does not say what happens when the session ends: %s", tl.Description)
		}
	}
	slices.Sort(names)
	if want := []string{"task_answer", "task_events", "task_interrupt", "task_note", "task_start", "task_status"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	dir := filepath.Join(t.TempDir(), "proj")
	if text, isErr := cs.call(t, "task_start", map[string]any{"directory": dir, "task": "say hello"}, nil); isErr {
		t.Fatalf("task_start: %s", text)
	}
	st := cs.waitState(t, dir, mcpserver.StatePassed)
	if st.Run == "" || st.Turns == 0 || !strings.Contains(st.Message, "verdict passed") || len(st.Questions) != 0 {
		t.Errorf("status at the end: %+v", st)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "hello.txt")); string(b) != "hello\n" {
		t.Errorf("hello.txt holds %q", b)
	}

	var some, all mcpserver.Events
	someText, _ := cs.call(t, "task_events", map[string]any{"directory": dir}, &some)
	allText, _ := cs.call(t, "task_events", map[string]any{"directory": dir, "all": true}, &all)
	if !some.Ended || some.State != mcpserver.StatePassed || len(some.Events) == 0 {
		t.Errorf("task_events at the end: %s", someText)
	}
	kinds := func(evs mcpserver.Events) map[string]bool {
		m := map[string]bool{}
		for _, e := range evs.Events {
			m[e.Kind] = true
		}
		return m
	}
	if k := kinds(some); k["delta"] || k["usage"] || !k["step"] || !k["tool_call"] {
		t.Errorf("task_events shows kinds %v: want no delta or usage, but steps and tool calls", k)
	}
	if k := kinds(all); !k["usage"] {
		t.Errorf("task_events all:true shows kinds %v: want usage", k)
	}
	if len(someText) >= len(allText) {
		t.Errorf("task_events is %d bytes, all:true %d: want it smaller", len(someText), len(allText))
	}
	if !strings.Contains(some.Summary, "tool_call") || !strings.Contains(some.Summary, "left out:") || !strings.Contains(some.Summary, "usage") {
		t.Errorf("task_events summary %q: want the kinds shown and those left out", some.Summary)
	}
	var asked mcpserver.Events
	cs.call(t, "task_events", map[string]any{"directory": dir, "kinds": []string{"step", "usage"}, "limit": 3}, &asked)
	if k := kinds(asked); len(asked.Events) != 3 || !asked.More || k["tool_call"] || !k["step"] {
		t.Errorf("task_events kinds [step usage] limit 3: %+v", asked)
	}
	if text, isErr := cs.call(t, "task_events", map[string]any{"directory": dir, "kinds": []string{"bogus"}}, nil); !isErr || !strings.Contains(text, "tool_call") {
		t.Errorf("task_events with an unknown kind: %s", text)
	}
	var after mcpserver.Events
	cs.call(t, "task_events", map[string]any{"directory": dir, "after": some.Last, "wait_s": 5}, &after)
	if len(after.Events) != 0 || !after.Ended {
		t.Errorf("task_events after the last: %+v", after)
	}

	// Nothing to continue: the start counts the wake and says so.
	if text, isErr := cs.call(t, "task_start", map[string]any{"directory": dir}, &st); isErr || st.State != mcpserver.StatePassed || !strings.Contains(text, "nothing to continue") {
		t.Errorf("task_start after the pass: %s", text)
	}
	if text, isErr := cs.call(t, "task_interrupt", map[string]any{"directory": dir}, nil); !isErr || !strings.Contains(text, "not running") {
		t.Errorf("task_interrupt after the end: %s", text)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if text, isErr := cs.call(t, "task_start", map[string]any{"directory": empty}, nil); !isErr || !strings.Contains(text, "nothing to continue") {
		t.Errorf("task_start with no task in an empty directory: %s", text)
	}
	if text, isErr := cs.call(t, "task_status", map[string]any{"directory": "relative/dir"}, nil); !isErr || !strings.Contains(text, "absolute path") {
		t.Errorf("a relative directory: %s", text)
	}

	// A start that cannot run says why at once, and leaves the directory free.
	t.Setenv("ANTHROPIC_API_KEY", "")
	keyless := connect(t, mcpserver.New(mcpserver.Options{Model: "claude-test"}))
	if text, isErr := keyless.call(t, "task_start", map[string]any{"directory": dir, "task": "more"}, nil); !isErr || !strings.Contains(text, "ANTHROPIC_API_KEY") {
		t.Errorf("task_start without a key: %s", text)
	}
	if st := keyless.status(t, dir); st.State != mcpserver.StateFailed || !strings.Contains(st.Message, "ANTHROPIC_API_KEY") {
		t.Errorf("status of a start without a key: %+v", st)
	}
	if text, isErr := cs.call(t, "task_start", map[string]any{"directory": dir}, nil); isErr {
		t.Errorf("task_start after a failed start elsewhere: %s", text)
	}
}

// The clarify step's question, its options, and what a note says.
const (
	question = "Which greeting should hello.txt hold?"
	note     = "keep it short"
)

// asking is the demo model with a clarify step that asks first, then
// writes the brief with the answer; it sets heard when a request carries
// the note.
func asking(heard *atomic.Bool) modeltest.Responder {
	demo := modeltest.Demo()
	return func(r *modeltest.Request) modeltest.Turn {
		if strings.Contains(requestText(r.Messages), note) {
			heard.Store(true)
		}
		if !strings.Contains(r.System, "the clarify step") {
			return demo(r)
		}
		results := lastResults(r.Messages)
		switch len(results) {
		case 0:
			return modeltest.Turn{Text: "I need one answer.", ToolCalls: []modeltest.ToolCall{{Name: "ask",
				Input: `{"question":"` + question + `","options":["hello","hi"]}`}}}
		case 1:
			brief := "## Goal\n\nhello.txt\n\n## Done when\n\n- hello.txt says hello\n\n## Constraints\n\nNone.\n\n" +
				"## Unknowns and assumptions\n\n- " + question + " " + strings.Join(strings.Fields(results[0]), " ") + "\n"
			in, _ := json.Marshal(map[string]string{"file_path": ".flower/notes/brief.md", "content": brief})
			return modeltest.Turn{Text: "Writing the brief.", ToolCalls: []modeltest.ToolCall{{Name: "Write", Input: string(in)}}}
		}
		return modeltest.Turn{Text: "The brief is written."}
	}
}

// lastResults are the tool results after the person's last prompt (a
// message without results: mail delivered beside results is no prompt).
func lastResults(msgs []model.Message) (results []string) {
	for _, m := range msgs {
		if m.Role != model.User {
			continue
		}
		prompt := true
		for _, b := range m.Content {
			if v, ok := b.(*model.ToolResult); ok {
				prompt = false
				results = append(results, v.Content)
			}
		}
		if prompt {
			results = nil
		}
	}
	return results
}

func requestText(msgs []model.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		for _, c := range m.Content {
			switch v := c.(type) {
			case *model.Text:
				b.WriteString(v.Text)
			case *model.ToolResult:
				b.WriteString(v.Content)
			}
		}
	}
	return b.String()
}

// askingModel points flower at a fake Anthropic server playing asking.
func askingModel(t *testing.T, heard *atomic.Bool) mcpserver.Options {
	t.Helper()
	o := env(t, "claude-test")
	srv := modeltest.NewAnthropic(asking(heard))
	t.Cleanup(srv.Close)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "test")
	return o
}

// TestAskNoteAnswer answers the task's question with an option's number
// and sends a note while it waits.
func TestAskNoteAnswer(t *testing.T) {
	var heard atomic.Bool
	cs := connect(t, mcpserver.New(askingModel(t, &heard)))
	dir := filepath.Join(t.TempDir(), "proj")
	if text, isErr := cs.call(t, "task_start", map[string]any{"directory": dir, "task": "say hello"}, nil); isErr {
		t.Fatalf("task_start: %s", text)
	}
	if text, isErr := cs.call(t, "task_start", map[string]any{"directory": dir, "task": "again"}, nil); !isErr || !strings.Contains(text, "already runs") {
		t.Errorf("a second task_start: %s", text)
	}
	st := cs.waitState(t, dir, mcpserver.StateWaiting)
	if len(st.Questions) != 1 || st.Questions[0].ID != "q1" || st.Questions[0].Question != question ||
		!slices.Equal(st.Questions[0].Options, []string{"hello", "hi"}) || st.Run == "" || st.Step == "" {
		t.Fatalf("task_status while it asks: %+v", st)
	}
	if text, isErr := cs.call(t, "task_note", map[string]any{"directory": dir, "text": note}, nil); isErr {
		t.Errorf("task_note: %s", text)
	}
	if text, isErr := cs.call(t, "task_answer", map[string]any{"directory": dir, "id": "q9", "text": "x"}, nil); !isErr || !strings.Contains(text, "not waiting") {
		t.Errorf("an answer to no question: %s", text)
	}
	if text, isErr := cs.call(t, "task_answer", map[string]any{"directory": dir, "id": "q1", "text": "1"}, nil); isErr || !strings.Contains(text, "hello") {
		t.Errorf("task_answer: %s", text)
	}
	end := cs.waitState(t, dir, mcpserver.StatePassed)
	if end.Run != st.Run {
		t.Errorf("the run passed is %s, the one that asked %s", end.Run, st.Run)
	}
	brief, _ := os.ReadFile(filepath.Join(dir, ".flower", "notes", "brief.md"))
	if !strings.Contains(string(brief), question+" The person answered: hello") {
		t.Errorf("the answer never reached the agent: brief.md\n%s", brief)
	}
	if !heard.Load() {
		t.Error("the note never reached the model")
	}
}

// TestStopAndContinue stops a task with task_interrupt and continues
// it; it ends the client's session while another task waits: that task
// stops, and a later session's task_start finishes the same run.
func TestStopAndContinue(t *testing.T) {
	var heard atomic.Bool
	s := mcpserver.New(askingModel(t, &heard))
	cs := connect(t, s)
	stopped, cut := filepath.Join(t.TempDir(), "stopped"), filepath.Join(t.TempDir(), "cut")
	for _, dir := range []string{stopped, cut} {
		if text, isErr := cs.call(t, "task_start", map[string]any{"directory": dir, "task": "say hello"}, nil); isErr {
			t.Fatalf("task_start: %s", text)
		}
	}
	asked := cs.waitState(t, stopped, mcpserver.StateWaiting)
	if text, isErr := cs.call(t, "task_interrupt", map[string]any{"directory": stopped}, nil); isErr {
		t.Fatalf("task_interrupt: %s", text)
	}
	st := cs.waitState(t, stopped, mcpserver.StateStopped)
	if !strings.Contains(st.Message, "task_start again") || st.Run != asked.Run || len(st.Questions) != 0 {
		t.Errorf("status once stopped: %+v", st)
	}
	if text, isErr := cs.call(t, "task_interrupt", map[string]any{"directory": stopped}, nil); !isErr || !strings.Contains(text, "not running") {
		t.Errorf("task_interrupt once stopped: %s", text)
	}
	if text, isErr := cs.call(t, "task_start", map[string]any{"directory": stopped}, nil); isErr {
		t.Fatalf("task_start to continue: %s", text)
	}
	if st := cs.waitState(t, stopped, mcpserver.StatePassed); st.Run != asked.Run {
		t.Errorf("the continued task passed run %s, want %s", st.Run, asked.Run)
	}

	asked = cs.waitState(t, cut, mcpserver.StateWaiting)
	cs.end(t) // the client exits: Run stops the task before it returns
	cs2 := connect(t, s)
	st = cs2.status(t, cut)
	if st.State != mcpserver.StateStopped || !strings.Contains(st.Message, "run flower in "+cut) {
		t.Errorf("status after the session ended: %+v", st)
	}
	if text, isErr := cs2.call(t, "task_start", map[string]any{"directory": cut}, nil); isErr {
		t.Fatalf("task_start in a new session: %s", text)
	}
	if st := cs2.waitState(t, cut, mcpserver.StatePassed); st.Run != asked.Run {
		t.Errorf("run %s passed, want the one cut, %s", st.Run, asked.Run)
	}
}

// TestShutdownCut shuts the server down with a context already ended
// while the task runs a long command: the command is cut rather than
// waited for, and the task says it stopped.
func TestShutdownCut(t *testing.T) {
	o := env(t, "claude-test")
	demo := modeltest.Demo()
	srv := modeltest.NewAnthropic(func(r *modeltest.Request) modeltest.Turn {
		if strings.Contains(r.System, "the work step") && len(lastResults(r.Messages)) == 0 {
			return modeltest.Turn{ToolCalls: []modeltest.ToolCall{{Name: "Bash", Input: `{"command":"sleep 600"}`}}}
		}
		return demo(r)
	})
	t.Cleanup(srv.Close)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "test")
	s := mcpserver.New(o)
	cs := connect(t, s)
	dir := filepath.Join(t.TempDir(), "proj")
	if text, isErr := cs.call(t, "task_start", map[string]any{"directory": dir, "task": "say hello"}, nil); isErr {
		t.Fatalf("task_start: %s", text)
	}
	for after, sleeping := 0, false; !sleeping; {
		var evs mcpserver.Events
		cs.call(t, "task_events", map[string]any{"directory": dir, "after": after, "wait_s": 30}, &evs)
		if evs.Ended {
			t.Fatalf("the task ended before its command ran: %+v", cs.status(t, dir))
		}
		for _, e := range evs.Events {
			sleeping = sleeping || (e.Kind == "tool_call" && e.Tool == "Bash")
		}
		after = evs.Last
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	s.Shutdown(ctx)
	if d := time.Since(start); d > time.Minute {
		t.Errorf("Shutdown waited %v for the command", d)
	}
	if st := cs.status(t, dir); st.State != mcpserver.StateStopped {
		t.Errorf("status after the cut: %+v", st)
	}
}
