package headless

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/permission"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// fakeRunner plays a scripted run per message: a delta first (as a
// streamed answer has it), then the session's init, one tool call with
// its result, and a final text.
type fakeRunner struct {
	mu         sync.Mutex
	runs       []Run
	interrupts int
	block      chan struct{} // when set, a run waits on it after its tool call
}

func (f *fakeRunner) Run(ctx context.Context, r Run, sink event.Sink) agent.Result {
	f.mu.Lock()
	f.runs = append(f.runs, r)
	n := len(f.runs)
	f.mu.Unlock()
	id := r.Resume
	if id == "" {
		id = "0f0f0f0f-0000-4000-8000-000000000001"
	}
	sink(event.Event{Kind: event.Delta, Text: "Look"})
	sink(event.Event{Kind: event.Init, Payload: map[string]any{"session": id}})
	sink(event.Event{Kind: event.Text, Text: "Looking."})
	sink(event.Event{Kind: event.ToolCall, Tool: "Bash", Payload: map[string]any{"id": "call1", "input": json.RawMessage(`{"command":"ls"}`)}})
	sink(event.Event{Kind: event.Usage, Payload: map[string]any{"input": 10, "output": 2}})
	if f.block != nil {
		<-f.block
	}
	sink(event.Event{Kind: event.Denied, Tool: "Bash", Text: "Permission denied", Payload: map[string]any{"id": "call1", "is_error": true}})
	sink(event.Event{Kind: event.Text, Text: "Done."})
	sink(event.Event{Kind: event.Usage, Payload: map[string]any{"input": 20, "output": 3}})
	return agent.Result{SessionID: id, OK: true, Stop: agent.StopEnded, Turns: 2 * n, Text: "Done.", Cost: 0.01}
}

func (f *fakeRunner) Interrupt() {
	f.mu.Lock()
	f.interrupts++
	f.mu.Unlock()
}

// lines parses what a session wrote.
func lines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var ls []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		ls = append(ls, m)
	}
	return ls
}

func kinds(ls []map[string]any) string {
	var k []string
	for _, l := range ls {
		s, _ := l["type"].(string)
		if sub, ok := l["subtype"].(string); ok && s == "system" {
			s += "/" + sub
		}
		k = append(k, s)
	}
	return strings.Join(k, " ")
}

// TestStreamJSONLines: system/init comes first (no delta before it), one
// assistant line per message with its blocks, a user line per tool
// result, and the result last with Claude Code's fields (issue 21 item 3).
func TestStreamJSONLines(t *testing.T) {
	var out strings.Builder
	s := New(Options{Out: &out, Format: FormatStreamJSON, Runner: &fakeRunner{}, Gate: permission.NewGate(permission.ModeAcceptEdits, false),
		Init: Init{Cwd: "/w", Model: "m", Tools: []string{"Bash"}}})
	s.Once(context.Background(), "go")
	ls := lines(t, out.String())
	if got := kinds(ls); got != "system/init assistant user assistant result" {
		t.Fatalf("lines: %s\n%s", got, out.String())
	}
	if ls[0]["session_id"] != "0f0f0f0f-0000-4000-8000-000000000001" || ls[0]["permissionMode"] != "acceptEdits" || ls[0]["cwd"] != "/w" {
		t.Errorf("init: %v", ls[0])
	}
	msg := ls[1]["message"].(map[string]any)
	if content := msg["content"].([]any); len(content) != 2 || msg["stop_reason"] != "tool_use" || msg["role"] != "assistant" {
		t.Errorf("assistant: %v", msg)
	}
	tr := ls[2]["message"].(map[string]any)["content"].([]any)[0].(map[string]any)
	if tr["type"] != "tool_result" || tr["tool_use_id"] != "call1" || tr["is_error"] != true {
		t.Errorf("user: %v", tr)
	}
	res := ls[4]
	for _, k := range []string{"subtype", "is_error", "duration_ms", "duration_api_ms", "num_turns", "result", "session_id",
		"total_cost_usd", "usage", "modelUsage", "permission_denials", "stop_reason"} {
		if _, ok := res[k]; !ok {
			t.Errorf("result has no %s: %v", k, res)
		}
	}
	d := res["permission_denials"].([]any)
	if len(d) != 1 || d[0].(map[string]any)["tool_input"].(map[string]any)["command"] != "ls" {
		t.Errorf("permission_denials: %v", d)
	}
	if u := res["usage"].(map[string]any); u["input_tokens"] != 30.0 || u["output_tokens"] != 5.0 {
		t.Errorf("usage: %v", u)
	}
}

// TestJSONAndText: json is the result object alone, text the result.
func TestJSONAndText(t *testing.T) {
	var out strings.Builder
	New(Options{Out: &out, Format: FormatJSON, Runner: &fakeRunner{}}).Once(context.Background(), "go")
	if ls := lines(t, out.String()); len(ls) != 1 || ls[0]["type"] != "result" || ls[0]["result"] != "Done." {
		t.Errorf("json: %s", out.String())
	}
	out.Reset()
	New(Options{Out: &out, Runner: &fakeRunner{}}).Once(context.Background(), "go")
	if out.String() != "Done.\n" {
		t.Errorf("text: %q", out.String())
	}
}

// TestServeQueuedAndControl: two queued messages are two turns of one
// session; initialize's system prompt reaches the runs; set_permission_mode
// changes the gate and a bad mode is an error reply; an unknown request
// gets an error, not silence; an interrupt between turns is not kept for
// the next one.
func TestServeQueuedAndControl(t *testing.T) {
	var out strings.Builder
	gate := permission.NewGate(permission.ModeDefault, true)
	fr := &fakeRunner{}
	s := New(Options{Out: &out, Format: FormatStreamJSON, Runner: fr, Gate: gate})
	in := strings.Join([]string{
		`{"type":"control_request","request_id":"r1","request":{"subtype":"initialize","systemPrompt":["Be terse."]}}`,
		`{"type":"control_request","request_id":"r2","request":{"subtype":"set_permission_mode","mode":"plan"}}`,
		`{"type":"control_request","request_id":"r3","request":{"subtype":"set_permission_mode","mode":"never"}}`,
		`{"type":"control_request","request_id":"r4","request":{"subtype":"rewind_files"}}`,
		`{"type":"user","message":{"role":"user","content":"first"}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second"}]}}`,
	}, "\n") + "\n"
	last, err := s.Serve(context.Background(), strings.NewReader(in))
	if err != nil || last == nil || !last.OK {
		t.Fatalf("Serve: %v %v", last, err)
	}
	ls := lines(t, out.String())
	replies := map[string]map[string]any{}
	var results []map[string]any
	for _, l := range ls {
		if l["type"] == "control_response" {
			r := l["response"].(map[string]any)
			replies[r["request_id"].(string)] = r
		}
		if l["type"] == "result" {
			results = append(results, l)
		}
	}
	if replies["r1"]["subtype"] != "success" || replies["r2"]["subtype"] != "success" || replies["r3"]["subtype"] != "error" || replies["r4"]["subtype"] != "error" {
		t.Errorf("replies: %v", replies)
	}
	if gate.Mode() != permission.ModePlan {
		t.Errorf("mode %s", gate.Mode())
	}
	if len(results) != 2 || len(fr.runs) != 2 || fr.runs[0].Prompt != "first" || fr.runs[1].Prompt != "second" ||
		fr.runs[1].Resume != "0f0f0f0f-0000-4000-8000-000000000001" || fr.runs[0].System != "Be terse." {
		t.Errorf("runs: %+v", fr.runs)
	}
	var o strings.Builder
	s = New(Options{Out: &o, Format: FormatStreamJSON, Runner: fr})
	if _, err := s.Serve(context.Background(), strings.NewReader(`{"type":"control_request","request_id":"i","request":{"subtype":"interrupt"}}`+"\n")); err != nil {
		t.Fatal(err)
	}
	if fr.interrupts != 0 {
		t.Error("an interrupt with no turn running reached the runtime")
	}
	if _, err := s.Serve(context.Background(), strings.NewReader("not json\n")); err == nil || !strings.Contains(err.Error(), "line 1 is not JSON") {
		t.Errorf("bad input: %v", err)
	}
}

// TestInterruptWhileRunning: an interrupt during a turn reaches the runner.
func TestInterruptWhileRunning(t *testing.T) {
	pr, pw := io.Pipe()
	or, ow := io.Pipe()
	fr := &fakeRunner{block: make(chan struct{})}
	s := New(Options{Out: ow, Format: FormatStreamJSON, Runner: fr})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = s.Serve(context.Background(), pr)
		ow.Close()
	}()
	sc := bufio.NewScanner(or)
	_, _ = io.WriteString(pw, `{"type":"user","message":{"role":"user","content":"go"}}`+"\n")
	for sc.Scan() && !strings.Contains(sc.Text(), `"type":"assistant"`) {
	}
	_, _ = io.WriteString(pw, `{"type":"control_request","request_id":"i","request":{"subtype":"interrupt"}}`+"\n")
	for sc.Scan() && !strings.Contains(sc.Text(), `"request_id":"i"`) {
	}
	close(fr.block)
	pw.Close()
	for sc.Scan() {
	}
	<-done
	if fr.interrupts != 1 {
		t.Errorf("%d interrupts reached the runner", fr.interrupts)
	}
}

// TestAskToolDurable: can_use_tool goes to the host, its deny is the
// answer, and the answer is kept in the store: the same call asked again
// (a resumed run) gets it without asking.
func TestAskToolDurable(t *testing.T) {
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "flower.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	j := StoreJournal{Store: db, Key: store.SideLog("/w", "~headless-permits")}
	or, ow := io.Pipe()
	s := New(Options{Out: ow, Format: FormatStreamJSON, Journal: j, PromptTool: true, Now: func() time.Time { return time.Unix(0, 0) }})
	u := &model.ToolUse{ID: "toolu_1", Name: "Bash", Input: json.RawMessage(`{"command":"rm -rf x"}`)}
	got := make(chan string, 1)
	go func() {
		a, _, _ := s.AskTool(context.Background(), u, permission.Decision{Action: permission.Ask}, "Allow?", nil)
		got <- a
	}()
	var req struct {
		RequestID string `json:"request_id"`
		Request   struct {
			Subtype, ToolName string
			Input             map[string]any `json:"input"`
			ToolUseID         string         `json:"tool_use_id"`
		} `json:"request"`
	}
	line, _ := bufio.NewReader(or).ReadString('\n')
	if err := json.Unmarshal([]byte(line), &req); err != nil || req.Request.Subtype != "can_use_tool" || req.Request.ToolUseID != "toolu_1" || req.Request.Input["command"] != "rm -rf x" {
		t.Fatalf("request: %s (%v)", line, err)
	}
	s.answered(controlReply{Subtype: "success", RequestID: req.RequestID, Response: json.RawMessage(`{"behavior":"deny","message":"no"}`)})
	if a := <-got; permission.ParseReply(a) != permission.Refuse {
		t.Fatalf("answer %q", a)
	}
	s2 := New(Options{Out: io.Discard, Journal: j}) // a new process after a crash
	if a, state, err := s2.AskTool(context.Background(), u, permission.Decision{Action: permission.Ask}, "Allow?", nil); err != nil || state != "answered" || permission.ParseReply(a) != permission.Refuse {
		t.Errorf("after a restart: %q %q %v", a, state, err)
	}
}

// TestSplitRules: Claude Code's tool lists, commas or spaces, parentheses kept.
func TestSplitRules(t *testing.T) {
	got := SplitRules([]string{"Bash(git log:*),Edit", "Read Write(src/**)"})
	if strings.Join(got, "|") != "Bash(git log:*)|Edit|Read|Write(src/**)" {
		t.Errorf("%q", got)
	}
}

// askingRunner asks the host about a call in the middle of its run.
type askingRunner struct {
	s     *Session
	state string
}

func (a *askingRunner) Run(ctx context.Context, r Run, sink event.Sink) agent.Result {
	u := &model.ToolUse{ID: "toolu_9", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}
	_, a.state, _ = a.s.AskTool(ctx, u, permission.Decision{Action: permission.Ask}, "Allow?", nil)
	return agent.Result{SessionID: "s", OK: true}
}

func (a *askingRunner) Interrupt() {}

// TestHostGoneWhileAsking: the host's input ends while a can_use_tool
// waits for its answer: the question settles unanswered (the call is not
// run) and the session ends instead of waiting forever.
func TestHostGoneWhileAsking(t *testing.T) {
	pr, pw := io.Pipe()
	or, ow := io.Pipe()
	ar := &askingRunner{}
	s := New(Options{Out: ow, Format: FormatStreamJSON, Runner: ar, PromptTool: true})
	ar.s = s
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = s.Serve(context.Background(), pr)
		ow.Close()
	}()
	_, _ = io.WriteString(pw, `{"type":"user","message":{"role":"user","content":"go"}}`+"\n")
	sc := bufio.NewScanner(or)
	for sc.Scan() && !strings.Contains(sc.Text(), `"can_use_tool"`) {
	}
	pw.Close() // the host dies
	for sc.Scan() {
	}
	<-done
	if ar.state != "declined" {
		t.Errorf("the question settled as %q", ar.state)
	}
}

// TestConfigApply: --allowedTools and --disallowedTools become rules,
// --mcp-config's servers join flower.yaml's (a file or a JSON text), the
// host's in-process servers are left to mcp_message, --strict-mcp-config
// drops the others.
func TestConfigApply(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(file, []byte(`{"mcpServers":{"fs":{"command":"npx","args":["-y","x"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	cfg.MCP.Servers = map[string]config.MCPServer{"old": {Command: "old"}}
	skipped, err := Config{Allowed: []string{"Read,Bash(git log:*)"}, Disallowed: []string{"Bash(rm:*)"}, Strict: true,
		MCPConfigs: []string{file, `{"mcpServers":{"calc":{"type":"sdk","name":"calc"},"web":{"type":"http","url":"http://127.0.0.1:1/mcp"}}}`}}.Apply(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Permissions.Allow) != 2 || cfg.Permissions.Deny[0] != "Bash(rm:*)" {
		t.Errorf("rules: %+v", cfg.Permissions)
	}
	if _, old := cfg.MCP.Servers["old"]; old || cfg.MCP.Servers["fs"].Command != "npx" || cfg.MCP.Servers["web"].URL == "" || len(skipped) != 1 || skipped[0] != "calc" {
		t.Errorf("servers %v, skipped %v", cfg.MCP.Servers, skipped)
	}
	if _, err := (Config{MCPConfigs: []string{"/no/such.json"}}).Apply(&cfg); err == nil || !strings.Contains(err.Error(), "--mcp-config /no/such.json") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestStructuredOutput: with --json-schema the JSON ending the answer is
// the result's structured_output.
func TestStructuredOutput(t *testing.T) {
	if _, err := SchemaInstructions("{nope"); err == nil {
		t.Error("a schema that is not JSON was taken")
	}
	v, ok := lastJSON("Here it is:\n```json\n{\"ok\": {\"n\": 1}}\n```")
	if m, _ := v.(map[string]any); !ok || m["ok"].(map[string]any)["n"] != 1.0 {
		t.Errorf("lastJSON: %v %v", v, ok)
	}
	if _, ok := lastJSON("no json here"); ok {
		t.Error("found JSON in plain text")
	}
}
