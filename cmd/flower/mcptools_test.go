//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/internal/npmtest"
	"github.com/flower-run/flower/internal/proctest"
	"github.com/flower-run/flower/mcp"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
)

// The test binary doubles as an MCP server over stdio, started by flower
// from the .mcp.json of a test: its one tool "append" is an effect that
// dedupes by the idempotency key flower sends.
func init() {
	if os.Getenv("FLOWER_TEST_MCP_SERVER") == "" {
		return
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "appender", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "append", Description: "Appends a line to the effects file, once per idempotency key.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"line":{"type":"string"}},"required":["line"]}`)},
		appendLine)
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "appender:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// appendLine logs every call (key and line) to $MCP_DIR/calls, applies the
// effect to $MCP_DIR/effects unless its key was applied before, then, with
// MCP_BLOCK=1, tells the test at $MCP_NOTIFY and never answers: flower is
// killed during the call, after its effect.
func appendLine(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var in struct{ Line string }
	_ = json.Unmarshal(req.Params.Arguments, &in)
	key, _ := req.Params.Meta[mcp.IdempotencyKey].(string)
	dir := os.Getenv("MCP_DIR")
	appendFile(filepath.Join(dir, "calls"), key+" "+in.Line+"\n")
	effects, _ := os.ReadFile(filepath.Join(dir, "effects"))
	text := "appended " + in.Line
	if strings.Contains(string(effects), key+" ") {
		text = "already appended under key " + key
	} else {
		appendFile(filepath.Join(dir, "effects"), key+" "+in.Line+"\n")
	}
	if os.Getenv("MCP_BLOCK") == "1" {
		if resp, err := http.Get(os.Getenv("MCP_NOTIFY")); err == nil {
			resp.Body.Close()
		}
		<-ctx.Done()
		select {} // the test kills flower, and flower's death kills this process
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
}

func appendFile(name, text string) {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		panic(err)
	}
}

// writeMCPJSON writes the workspace's .mcp.json.
func writeMCPJSON(t *testing.T, dir string, servers map[string]any) {
	t.Helper()
	b, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// appenderServer is the .mcp.json entry of the test binary's server. Its
// one argument, appenderMarker(t), lets the test find its process: in the
// sandbox's PID namespace, its own pid means nothing outside.
func appenderServer(t *testing.T) map[string]any {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"command": self, "args": []string{appenderMarker(t)}, "env": map[string]string{"FLOWER_TEST_MCP_SERVER": "1",
		"MCP_DIR": "${MCP_DIR}", "MCP_BLOCK": "${MCP_BLOCK:-}", "MCP_NOTIFY": "${MCP_NOTIFY:-}"}}
}

func appenderMarker(t *testing.T) string {
	return fmt.Sprintf("appender:%d:%s", os.Getpid(), t.Name())
}

// onlySession is the id of the one session a workspace's store holds.
func onlySession(t *testing.T, dir string) string {
	t.Helper()
	s, err := openStore(filepath.Join(dir, "runs", flower.StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws, _ := filepath.EvalSymlinks(dir)
	metas, err := s.Sessions(context.Background(), store.SessionKey(ws, ""))
	if err != nil || len(metas) != 1 {
		t.Fatalf("sessions of %s: %v, %v", ws, metas, err)
	}
	return metas[0].Key[strings.LastIndex(metas[0].Key, "/")+1:]
}

// waitGone waits, on a pidfd, for the process pid to end: an MCP server
// flower started must die with flower.
func waitGone(t *testing.T, pid string) {
	t.Helper()
	n, err := strconv.Atoi(pid)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.PidfdOpen(n, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	if err != nil {
		t.Skipf("pidfd_open: %v", err)
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		k, err := unix.Poll(fds, int(guard.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || k == 0 {
			t.Fatalf("the MCP server (pid %d) outlived flower: %v", n, err)
		}
		return
	}
}

func readLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(string(b), "\n", " \n "))
}

// TestMCPCrashDuringEffect kills flower while an effectful MCP call runs,
// after its effect, then finishes the session: the call is ambiguous and
// the resume policy decides, exactly as for Bash (R5.4, R5.7, issue 13).
// The server saw the same idempotency key both times, so under retry it
// applied the effect once.
func TestMCPCrashDuringEffect(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"retry", "skip"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeMCPJSON(t, dir, map[string]any{"ap": appenderServer(t)})
			if err := os.WriteFile(filepath.Join(dir, "flower.yaml"), []byte("resume: {default: "+policy+"}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			srv, env := fakeModelWith(t, oneCall("mcp__ap__append", `{"line":"x"}`))
			env = append(env, "MCP_DIR="+dir)
			var once sync.Once
			notified := make(chan struct{})
			hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { once.Do(func() { close(notified) }) }))
			defer hook.Close()

			p := startFlower(t, dir, append(env, "MCP_BLOCK=1", "MCP_NOTIFY="+hook.URL), false, "once", "append x")
			select {
			case <-notified:
			case <-p.done:
				t.Fatalf("flower ended before the call\n%s%s", p.stdout, p.stderr)
			case <-time.After(guard):
				t.Fatal("the MCP call never ran")
			}
			pids := proctest.WithArg(appenderMarker(t))
			if len(pids) != 1 {
				t.Fatalf("server pids %v", pids)
			}
			p.cmd.Process.Kill()
			p.ended()
			waitGone(t, strconv.Itoa(pids[0])) // the server died with flower
			if !strings.Contains(p.stdout.String(), "mcp: ap 1 tools") {
				t.Errorf("no banner line for the server:\n%s", p.stdout)
			}
			id := onlySession(t, dir)
			r := runFlower(t, dir, env, "once", "--resume", id)
			if r.code != 0 {
				t.Fatalf("resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			calls, effects := readLines(t, filepath.Join(dir, "calls")), readLines(t, filepath.Join(dir, "effects"))
			reqs := srv.Requests()
			last := toolResults(reqs[len(reqs)-1])
			switch policy {
			case "retry": // run again, with the same key: the server dedupes
				if len(calls) != 4 || calls[0] != calls[2] || !strings.HasPrefix(calls[0], "toolu_") {
					t.Errorf("calls %q: want the same op id twice", calls)
				}
				if len(last) != 1 || !strings.Contains(last[0], "already appended under key "+calls[0]) {
					t.Errorf("the model got %q", last)
				}
			case "skip": // not run again: the model is told
				if len(calls) != 2 || len(last) != 1 || !strings.Contains(last[0], `resume policy "skip"`) {
					t.Errorf("calls %q, the model got %q", calls, last)
				}
			}
			if len(effects) != 2 {
				t.Errorf("effects %q: want exactly one", effects)
			}
			if n := srv.Count(); n != 2 {
				t.Errorf("%d model requests, want 2 (none asked twice)", n)
			}
		})
	}
}

// TestOnceWithFilesystemServer: .mcp.json names the filesystem server
// from npm; its tools are in the request, the model calls one, and its
// result reaches the next request (issue 13).
func TestOnceWithFilesystemServer(t *testing.T) {
	t.Parallel()
	index := npmServerIndex(t, "server-filesystem")
	dir := t.TempDir()
	writeMCPJSON(t, dir, map[string]any{"files": map[string]any{"command": "node", "args": []string{index, dir}}})
	ws, _ := filepath.EvalSymlinks(dir)
	file := filepath.Join(ws, "from-mcp.txt")
	srv, env := fakeModelWith(t, oneCall("mcp__files__write_file", fmt.Sprintf(`{"path":%q,"content":"written over MCP"}`, file)))
	r := runFlower(t, dir, env, "once", "write a file over MCP")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "mcp: files 14 tools") {
		t.Errorf("no banner line:\n%s", r.stdout)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, name := range []string{"mcp__files__write_file", "mcp__files__read_text_file", "Bash"} {
		if !contains(reqs[0].Tools, name) {
			t.Errorf("the request offers %v, without %s", reqs[0].Tools, name)
		}
	}
	if got := toolResults(reqs[1]); len(got) != 1 || !strings.Contains(got[0], "Successfully wrote to "+file) {
		t.Errorf("the next request holds %q", got)
	}
	if b, _ := os.ReadFile(file); string(b) != "written over MCP" {
		t.Errorf("file holds %q", b)
	}
}

// TestMCPMissingCommandIsOneLine: a server whose command does not exist
// is one line naming it; the run goes on without its tools.
func TestMCPMissingCommandIsOneLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeMCPJSON(t, dir, map[string]any{"gh": map[string]any{"command": "no-such-mcp-server", "args": []string{"stdio"}}})
	srv, env := fakeModelWith(t, func(*modeltest.Request) modeltest.Turn { return modeltest.Turn{Text: "ok"} })
	r := runFlower(t, dir, env, "once", "hello")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := `mcp: server "gh" (no-such-mcp-server stdio): command "no-such-mcp-server" not found in PATH (install it, or give its full path in .mcp.json); its tools are absent` + "\n"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("stdout lacks the line %q:\n%s", want, r.stdout)
	}
	for _, n := range srv.Requests()[0].Tools {
		if strings.HasPrefix(n, "mcp__") {
			t.Errorf("tool %s of a server that never started", n)
		}
	}
}

// TestMCPBadConfigIsOneLine: a broken .mcp.json is a usage error naming it.
func TestMCPBadConfigIsOneLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers": {"x": {"args": []}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, env := fakeModel(t)
	r := runFlower(t, dir, env, "once", "hello")
	if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, `.mcp.json: server "x": no command`) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// npmServerIndex is a server installed by .ci/run into mcp/testdata/npm
// (npmtest.Server).
func npmServerIndex(t *testing.T, pkg string) string {
	t.Helper()
	return npmtest.Server(t, filepath.Join("..", "..", "mcp", "testdata", "npm"), pkg)
}

// TestWakeOffersMCPToWork: in flower "task", the servers of .mcp.json
// start when the work step begins, and only work is offered their tools.
func TestWakeOffersMCPToWork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeMCPJSON(t, dir, map[string]any{"ap": appenderServer(t)})
	srv, env := fakeModel(t)
	r := runFlower(t, dir, append(env, "MCP_DIR="+dir), args(testTask)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "mcp: ap 1 tools") {
		t.Errorf("no banner line for the server:\n%s", r.stdout)
	}
	for _, req := range srv.Requests() {
		offered := contains(req.Tools, "mcp__ap__append")
		if want := stepOf(req.System) == "work"; offered != want {
			t.Errorf("step %s offered the MCP tool: %v, want %v", stepOf(req.System), offered, want)
		}
	}
}

// TestMCPCrashAtEachFailpoint kills flower (by failpoint) at each point of
// an effectful MCP call, then finishes the session, under retry and skip:
// the same table as for the built-in effects (R5.4, R5.7, issue 13).
//
//   - after-intent: the intent is durable, the call never reached the
//     server: retry runs it once; skip never does.
//   - after-effect: the server applied it, the result is not durable:
//     retry runs it again with the same key (the server dedupes); skip not.
//   - after-result: complete; never runs again.
func TestMCPCrashAtEachFailpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fp, policy     string
		calls, effects int    // lines in the server's logs after the wake
		got            string // in the result the model gets
	}{
		{"after-intent", "retry", 1, 1, "appended x"},
		{"after-intent", "skip", 0, 0, `resume policy "skip"`},
		{"after-effect", "retry", 2, 1, "already appended under key"},
		{"after-effect", "skip", 1, 1, `resume policy "skip"`},
		{"after-result", "retry", 1, 1, "appended x"},
	}
	for _, tt := range tests {
		t.Run(tt.fp+"/"+tt.policy, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeMCPJSON(t, dir, map[string]any{"ap": appenderServer(t)})
			if err := os.WriteFile(filepath.Join(dir, "flower.yaml"), []byte("resume: {default: "+tt.policy+"}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			srv, env := fakeModelWith(t, oneCall("mcp__ap__append", `{"line":"x"}`))
			env = append(env, "MCP_DIR="+dir)
			if r := runFlower(t, dir, append(env, "FLOWER_FAILPOINT="+tt.fp+":1"), "once", "append x"); r.code == 0 {
				t.Fatalf("the failpoint did not kill flower\n%s%s", r.stdout, r.stderr)
			}
			r := runFlower(t, dir, env, "once", "--resume", onlySession(t, dir))
			if r.code != 0 {
				t.Fatalf("resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			calls, effects := readLines(t, filepath.Join(dir, "calls")), readLines(t, filepath.Join(dir, "effects"))
			if len(calls) != 2*tt.calls || len(effects) != 2*tt.effects {
				t.Errorf("calls %q, effects %q: want %d and %d", calls, effects, tt.calls, tt.effects)
			}
			if tt.calls == 2 && calls[0] != calls[2] {
				t.Errorf("the retry carried another key: %q", calls)
			}
			reqs := srv.Requests()
			if last := toolResults(reqs[len(reqs)-1]); len(last) != 1 || !strings.Contains(last[0], tt.got) {
				t.Errorf("the model got %q, want %q", last, tt.got)
			}
			if len(reqs) != 2 {
				t.Errorf("%d model requests, want 2", len(reqs))
			}
		})
	}
}
