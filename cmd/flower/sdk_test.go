package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/model/modeltest"
)

// The real Claude Agent SDK (@anthropic-ai/claude-agent-sdk from npm,
// pinned in testdata/claudesdk/package-lock.json, installed by .ci/run)
// drives flower in place of Claude Code: its query() spawns a wrapper
// that execs flower, against the fake Anthropic API (issue 21 items 3-5).

// sdkDriver is testdata/claudesdk/driver.mjs, or a skip when the SDK is
// not installed (a failure under CI).
func sdkDriver(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "claudesdk"))
	if err != nil {
		t.Fatal(err)
	}
	_, nodeErr := exec.LookPath("node")
	_, statErr := os.Stat(filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-agent-sdk", "sdk.mjs"))
	switch {
	case nodeErr == nil && statErr == nil:
		return filepath.Join(dir, "driver.mjs")
	case os.Getenv("CI") != "":
		t.Fatalf("CI: the Claude Agent SDK is not installed (node: %v; %v): .ci/run must run npm ci in cmd/flower/testdata/claudesdk", nodeErr, statErr)
	}
	t.Skip("the Claude Agent SDK is not installed: run npm ci --omit=optional in cmd/flower/testdata/claudesdk")
	return ""
}

// sdkRun is what one scenario of driver.mjs printed.
type sdkRun struct {
	lines  []map[string]any
	stderr string
}

// types are the lines' type[/subtype], in order.
func (r sdkRun) types() []string {
	var out []string
	for _, l := range r.lines {
		ty, _ := l["type"].(string)
		if sub, ok := l["subtype"].(string); ok && ty == "system" {
			ty += "/" + sub
		}
		if ty != "" {
			out = append(out, ty)
		}
	}
	return out
}

// first is the first line with key k.
func (r sdkRun) first(k string) map[string]any {
	for _, l := range r.lines {
		if _, ok := l[k]; ok {
			return l
		}
	}
	return nil
}

func (r sdkRun) results() []map[string]any {
	var out []map[string]any
	for _, l := range r.lines {
		if l["type"] == "result" {
			out = append(out, l)
		}
	}
	return out
}

// runSDK runs scenario in workspace ws with the fake API srv.
func runSDK(t *testing.T, ws string, srv *modeltest.Server, scenario string) sdkRun {
	t.Helper()
	driver := sdkDriver(t)
	bin := t.TempDir()
	wrapper := filepath.Join(bin, "claude")
	pidfile := filepath.Join(bin, "pid")
	script := "#!/bin/sh\necho $$ > " + pidfile + "\nexec " + flowerBin + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", driver, scenario)
	cmd.Dir = ws
	cmd.Env = append(baseEnv(ws), "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=test", "WS="+ws,
		"FLOWER_WRAPPER="+wrapper, "FLOWER_PIDFILE="+pidfile, runDirEnv+"="+filepath.Join(ws, "runs"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("node %s: %v\n%s\n%s", scenario, err, out.String(), errb.String())
		}
	case <-time.After(2 * time.Minute): // a bound on a hung SDK, not a wait for anything
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("node %s hung (%d model requests)\n%s\n%s", scenario, srv.Count(), out.String(), errb.String())
	}
	r := sdkRun{stderr: errb.String()}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("driver printed a line that is not JSON: %q\n%s", line, errb.String())
		}
		r.lines = append(r.lines, m)
	}
	if end := r.first("end"); end == nil || end["end"] != "ok" {
		t.Fatalf("scenario %s did not end well: %v\nstdout:\n%s\nstderr:\n%s", scenario, end, out.String(), errb.String())
	}
	return r
}

// TestSDKSession: query() with a string prompt runs a multi-turn tool
// session and receives system/init first, assistant and user messages,
// and result last, with Claude Code's fields.
func TestSDKSession(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewAnthropic(writeTurns())
	defer srv.Close()
	ws := t.TempDir()
	r := runSDK(t, ws, srv, "session")
	got := strings.Join(r.types(), " ")
	if got != "system/init assistant user assistant result" {
		t.Fatalf("SDK messages: %s\n%s", got, r.stderr)
	}
	init, res := r.lines[0], r.results()[0]
	if init["session_id"] != res["session_id"] || len(res["session_id"].(string)) != 36 || init["cwd"] != ws ||
		init["permissionMode"] != "default" || init["apiKeySource"] != "ANTHROPIC_API_KEY" {
		t.Errorf("init %v\nresult %v", init, res)
	}
	if res["subtype"] != "success" || res["is_error"] != false || res["result"] != "All done." || res["num_turns"] != 2.0 ||
		res["stop_reason"] != "end_turn" || res["modelUsage"] == nil || res["permission_denials"] == nil {
		t.Errorf("result: %v", res)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "a.txt")); err != nil || string(b) != "A" {
		t.Errorf("a.txt: %q %v", b, err)
	}
}

// TestSDKQueuedMessages: two user messages on one process's input are
// answered in turn, in one session.
func TestSDKQueuedMessages(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewAnthropic(modeltest.Script(modeltest.Turn{Text: "one"}, modeltest.Turn{Text: "two"}))
	defer srv.Close()
	r := runSDK(t, t.TempDir(), srv, "queued")
	res := r.results()
	if len(res) != 2 || res[0]["result"] != "one" || res[1]["result"] != "two" || res[0]["session_id"] != res[1]["session_id"] {
		t.Fatalf("results: %v\n%s", res, r.stderr)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || len(reqs[1].Messages) != 3 {
		t.Errorf("the second message is not a turn of the first's session: %d requests", len(reqs))
	}
}

// bashTurns: the model runs a Bash command, then ends.
func bashTurns(command string) modeltest.Responder {
	in, _ := json.Marshal(map[string]string{"command": command})
	return modeltest.Script(
		modeltest.Turn{Text: "Running.", ToolCalls: []modeltest.ToolCall{{Name: "Bash", Input: string(in)}}},
		modeltest.Turn{Text: "Done."},
	)
}

// TestSDKCanUseToolDenies: a canUseTool callback that denies Bash is
// asked (can_use_tool over stdio) and the command does not run; the
// denial is in result.permission_denials.
func TestSDKCanUseToolDenies(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewAnthropic(bashTurns("touch ran.txt"))
	defer srv.Close()
	ws := t.TempDir()
	r := runSDK(t, ws, srv, "deny")
	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); err == nil {
		t.Fatal("the denied command ran")
	}
	asked, _ := r.first("asked")["asked"].([]any)
	if len(asked) != 1 || asked[0].(map[string]any)["name"] != "Bash" {
		t.Errorf("canUseTool calls: %v", asked)
	}
	res := r.results()
	if len(res) != 1 {
		t.Fatalf("results: %v", res)
	}
	if d, _ := res[0]["permission_denials"].([]any); len(d) != 1 || d[0].(map[string]any)["tool_name"] != "Bash" {
		t.Errorf("permission_denials: %v", res[0]["permission_denials"])
	}
}

// TestSDKPlanMode: setPermissionMode('plan') between two messages takes
// effect: the second message's Bash call is not run.
func TestSDKPlanMode(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewAnthropic(modeltest.Script(modeltest.Turn{Text: "Hi."},
		modeltest.Turn{Text: "Running.", ToolCalls: []modeltest.ToolCall{{Name: "Bash", Input: `{"command":"touch ran.txt"}`}}},
		modeltest.Turn{Text: "Done."}))
	defer srv.Close()
	ws := t.TempDir()
	r := runSDK(t, ws, srv, "plan")
	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); err == nil {
		t.Fatal("a command ran in plan mode")
	}
	if m := r.first("setMode"); m == nil || m["setMode"].(map[string]any)["mode"] != "plan" {
		t.Errorf("setPermissionMode answered %v", m)
	}
	var denied string
	for _, l := range r.lines {
		if l["type"] == "user" {
			denied = l["tool_use_result"].(string)
		}
	}
	if !strings.Contains(denied, "plan mode") {
		t.Errorf("the tool result does not say plan mode: %q", denied)
	}
	if res := r.results(); len(res) != 2 || res[1]["result"] != "Done." {
		t.Errorf("results: %v", res)
	}
}

// TestSDKInterrupt: interrupt() while a tool runs stops the run at the
// next message boundary: the tool finishes, no further model call.
func TestSDKInterrupt(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewAnthropic(bashTurns("touch started; while [ ! -e go ]; do sleep 0.02; done; echo finished > done.txt"))
	defer srv.Close()
	ws := t.TempDir()
	r := runSDK(t, ws, srv, "interrupt")
	res := r.results()
	if len(res) != 1 || res[0]["is_error"] != true || res[0]["subtype"] != "error_during_execution" {
		t.Fatalf("results: %v\n%s", res, r.stderr)
	}
	if srv.Count() != 1 {
		t.Errorf("%d model requests: the interrupt did not stop the run at the boundary", srv.Count())
	}
	if _, err := os.Stat(filepath.Join(ws, "done.txt")); err != nil {
		t.Errorf("the running command was cut: %v", err)
	}
}

// TestSDKResumeAfterKill: flower is SIGKILLed while its Bash call runs; a
// second query() with resume continues the session, and the effect has
// run exactly once (flower.yaml's skip policy for Bash: the cut call is
// not run again).
func TestSDKResumeAfterKill(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewAnthropic(bashTurns("echo ran >> effect.txt; touch started; while :; do sleep 0.05; done"))
	defer srv.Close()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "flower.yaml"), []byte("resume:\n  per_tool: {Bash: skip}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runSDK(t, ws, srv, "resume")
	if r.first("killed") == nil {
		t.Fatalf("flower was not killed:\n%v", r.types())
	}
	res := r.results()
	if len(res) != 1 || res[0]["is_error"] != false || res[0]["result"] != "Done." {
		t.Fatalf("the resumed query's results: %v\n%s", res, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "effect.txt")); string(b) != "ran\n" {
		t.Errorf("effect.txt %q: the effect did not run exactly once", b)
	}
	if srv.Count() != 2 {
		t.Errorf("%d model requests, want 2 (none paid twice)", srv.Count())
	}
}

// TestSDKPreToolUseHook: the host's PreToolUse hook sees each Bash call
// before it runs (hook_callback); the call it denies does not run, the one
// it allows does.
func TestSDKPreToolUseHook(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewAnthropic(modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{{Name: "Bash", Input: `{"command":"touch ok.txt"}`}}},
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{{Name: "Bash", Input: `{"command":"rm -f keep.txt"}`}}},
		modeltest.Turn{Text: "Done."}))
	defer srv.Close()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "keep.txt"), []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runSDK(t, ws, srv, "hook")
	calls, _ := r.first("calls")["calls"].([]any)
	if len(calls) != 2 || calls[0].(map[string]any)["event"] != "PreToolUse" || calls[1].(map[string]any)["command"] != "rm -f keep.txt" {
		t.Fatalf("hook calls: %v\n%s", calls, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "ok.txt")); err != nil {
		t.Error("the call the hook allowed did not run")
	}
	if _, err := os.Stat(filepath.Join(ws, "keep.txt")); err != nil {
		t.Error("the call the hook denied ran")
	}
	if res := r.results(); len(res) != 1 || len(res[0]["permission_denials"].([]any)) != 1 {
		t.Errorf("results: %v", res)
	}
}

// TestSDKInProcessMCPServer: the host's createSdkMcpServer tools are
// offered to the model as mcp__SERVER__TOOL and called over mcp_message.
func TestSDKInProcessMCPServer(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewAnthropic(modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{{Name: "mcp__calc__add", Input: `{"a":2,"b":3}`}}},
		modeltest.Turn{Text: "5."}))
	defer srv.Close()
	r := runSDK(t, t.TempDir(), srv, "sdkmcp")
	calls, _ := r.first("calls")["calls"].([]any)
	if len(calls) != 1 {
		t.Fatalf("the host's tool was called %d times\n%v\n%s", len(calls), r.types(), r.stderr)
	}
	var result string
	for _, l := range r.lines {
		if l["type"] == "user" {
			result, _ = l["tool_use_result"].(string)
		}
	}
	if result != "5" {
		t.Errorf("tool result %q", result)
	}
	if reqs := srv.Requests(); len(reqs) == 0 || !slices.Contains(reqs[0].Tools, "mcp__calc__add") {
		t.Errorf("the model was not offered mcp__calc__add")
	}
}

// TestSDKHostDies: the host is SIGKILLed while flower's Bash call runs;
// flower, finding its output gone, stops at the next message boundary
// (the model request it had begun is cut); a new host's query() with
// resume continues the session: the effect ran once, at most one request
// was paid twice.
func TestSDKHostDies(t *testing.T) {
	t.Parallel()
	in, _ := json.Marshal(map[string]string{"command": "touch started; while [ ! -e go ]; do sleep 0.02; done; echo ran >> effect.txt"})
	srv := modeltest.NewAnthropic(func(r *modeltest.Request) modeltest.Turn {
		if r.N == 1 {
			return modeltest.Turn{Text: "Running.", ToolCalls: []modeltest.ToolCall{{Name: "Bash", Input: string(in)}}}
		}
		return modeltest.Turn{Text: "Done."}
	})
	defer srv.Close()
	ws := t.TempDir()
	r := runSDK(t, ws, srv, "hostdies")
	if r.first("flowerGone") == nil {
		t.Fatalf("flower did not stop:\n%v", r.types())
	}
	res := r.results()
	if len(res) != 1 || res[0]["is_error"] != false || res[0]["result"] != "Done." {
		t.Fatalf("the new host's results: %v\n%s", res, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "effect.txt")); string(b) != "ran\n" {
		t.Errorf("effect.txt %q: the effect did not run exactly once", b)
	}
	if n := srv.Count(); n < 2 || n > 3 {
		t.Errorf("%d model requests, want 2, or 3 with the one the host's death cut", n)
	}
}
