package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
)

// These tests run the real binary (built by TestMain) with flower serve,
// and the terminal's "?" oracle line, against a fake Anthropic server that
// plays the starter flow: the demo model, except that clarify first asks
// the person which colour the header should be.

const (
	serveQuestion = "Which colour should the header be?"
	oracleAnswer  = "Still clarifying: waiting for your answer about the colour."
)

// serveModel is the fake model of these tests.
func serveModel(t *testing.T) *modeltest.Server {
	demo := modeltest.Demo()
	srv := modeltest.NewAnthropic(func(r *modeltest.Request) modeltest.Turn {
		switch {
		case strings.Contains(r.System, "oracle of flower"):
			return modeltest.Turn{Text: oracleAnswer}
		case strings.Contains(r.System, "the clarify step"):
			return serveClarify(r)
		}
		return demo(r)
	})
	t.Cleanup(srv.Close)
	return srv
}

// serveClarify asks, then writes a brief holding the answer, then ends.
func serveClarify(r *modeltest.Request) modeltest.Turn {
	results := resultsSinceLastPrompt(r.Messages)
	switch len(results) {
	case 0:
		return modeltest.Turn{Text: "One question first.", ToolCalls: []modeltest.ToolCall{{Name: "ask",
			Input: `{"question":"` + serveQuestion + `","options":["red","blue"]}`}}}
	case 1:
		brief := "## Goal\n\nA header, coloured as the person said: " + strings.Join(strings.Fields(results[0]), " ") +
			"\n\n## Done when\n\n- hello.txt says hello\n\n## Constraints\n\nNone.\n\n## Unknowns and assumptions\n\nNone.\n"
		in, _ := json.Marshal(map[string]string{"file_path": ".flower/notes/brief.md", "content": brief})
		return modeltest.Turn{Text: "Writing the brief.", ToolCalls: []modeltest.ToolCall{{Name: "Write", Input: string(in)}}}
	}
	return modeltest.Turn{Text: "The brief is written."}
}

// resultsSinceLastPrompt are the tool results after the last user text.
func resultsSinceLastPrompt(msgs []model.Message) []string {
	var results []string
	for _, m := range msgs {
		if m.Role != model.User {
			continue
		}
		for _, b := range m.Content {
			switch v := b.(type) {
			case *model.Text:
				results = nil
			case *model.ToolResult:
				results = append(results, v.Content)
			}
		}
	}
	return results
}

// serving is a flower process started by a test.
type serving struct {
	t              *testing.T
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	stdout, stderr *watched
	done           chan struct{} // closed when the process has ended
	err            error         // Wait's, once done
}

// serveBound fails a hung test instead of stalling the suite; no test
// waits for it to pass.
const serveBound = 90 * time.Second

func startServing(t *testing.T, dir string, env []string, args ...string) *serving {
	t.Helper()
	s := &serving{t: t, stdout: newWatched(), stderr: newWatched(), done: make(chan struct{})}
	s.cmd = exec.Command(flowerBin, args...)
	s.cmd.Dir = dir
	s.cmd.Env = append(baseEnv(dir), env...)
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	s.cmd.WaitDelay = 10 * time.Second
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
	})
	return s
}

// waitOutput waits until stdout matches re and returns the match.
func (s *serving) waitOutput(re *regexp.Regexp) []string {
	s.t.Helper()
	bound := time.NewTimer(serveBound)
	defer bound.Stop()
	for {
		out, changed := s.stdout.snapshot()
		if m := re.FindStringSubmatch(out); m != nil {
			return m
		}
		select {
		case <-changed:
		case <-s.done:
			if m := re.FindStringSubmatch(s.stdout.String()); m != nil {
				return m
			}
			s.t.Fatalf("flower ended without printing %v\nstdout:\n%s\nstderr:\n%s", re, s.stdout, s.stderr)
		case <-bound.C:
			s.t.Fatalf("flower did not print %v\nstdout:\n%s\nstderr:\n%s", re, s.stdout, s.stderr)
		}
	}
}

// wait waits for the process to end and returns its exit code.
func (s *serving) wait() int {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(serveBound):
		s.t.Fatalf("flower did not end\nstdout:\n%s\nstderr:\n%s", s.stdout, s.stderr)
	}
	if strings.Contains(s.stderr.String(), "WARNING: DATA RACE") {
		s.t.Fatalf("data race:\n%s", s.stderr)
	}
	var ee *exec.ExitError
	if errors.As(s.err, &ee) {
		return ee.ExitCode()
	}
	if s.err != nil {
		s.t.Fatal(s.err)
	}
	return 0
}

var servedURL = regexp.MustCompile(`flower: open (http://127\.0\.0\.1:\d+)/\?token=([0-9a-f]{64})\n`)

// client talks to a flower serve process.
type client struct {
	t           *testing.T
	base, token string
}

func (c *client) do(method, path, body, token string) (int, string) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// events follows the WebSocket until an event satisfies stop.
func (c *client) events(ctx context.Context, stop func(kind string, payload map[string]any) bool) {
	c.t.Helper()
	ws, _, err := websocket.Dial(ctx, strings.Replace(c.base, "http", "ws", 1)+"/ws",
		&websocket.DialOptions{Subprotocols: []string{"flower.v1", "bearer." + c.token}})
	if err != nil {
		c.t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 22)
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			c.t.Fatalf("events: %v", err)
		}
		var b struct {
			Events []struct {
				Kind    string         `json:"kind"`
				Payload map[string]any `json:"payload"`
			} `json:"events"`
		}
		json.Unmarshal(data, &b)
		for _, e := range b.Events {
			if stop(e.Kind, e.Payload) {
				return
			}
		}
	}
}

var runEnded = regexp.MustCompile(`flower: the run ended; the page stays up`)

func asked(kind string, p map[string]any) bool { return kind == "ask" && p["state"] == "asked" }

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), serveBound)
	t.Cleanup(cancel)
	return ctx
}

// serveEnv points flower at the fake model.
func serveEnv(srv *modeltest.Server, extra ...string) []string {
	return append([]string{"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + srv.URL}, extra...)
}

// flower serve runs the starter flow with the Web front end: the question
// is answered over HTTP, the oracle answers without touching the run, and
// the run goes on to a passed verdict.
func TestServeRunsTheWorkflowSteeredOverHTTP(t *testing.T) {
	dir := t.TempDir()
	srv := serveModel(t)
	s := startServing(t, dir, serveEnv(srv), "serve", "make a header")
	m := s.waitOutput(servedURL)
	c := &client{t: t, base: m[1], token: m[2]}
	if !strings.HasPrefix(s.stdout.String(), "-> starting in ") {
		t.Errorf("no banner first:\n%s", s.stdout)
	}

	for _, tok := range []string{"", "0123456789abcdef0123456789abcdef"} {
		if code, _ := c.do("GET", "/asks", "", tok); code != http.StatusUnauthorized {
			t.Errorf("GET /asks with token %q: %d", tok, code)
		}
	}
	if code, _ := c.do("GET", "/asks?token="+c.token, "", ""); code != http.StatusUnauthorized {
		t.Errorf("token in the query of an API request: %d", code)
	}
	if code, body := c.do("GET", "/?token="+c.token, "", ""); code != http.StatusOK || !strings.Contains(body, "Waiting for you") {
		t.Errorf("the page: %d", code)
	}

	c.events(bounded(t), asked)
	code, body := c.do("GET", "/asks", "", c.token)
	if code != http.StatusOK || !strings.Contains(body, serveQuestion) || !strings.Contains(body, `"id":"q1"`) {
		t.Fatalf("GET /asks: %d %s", code, body)
	}
	code, body = c.do("POST", "/oracle", `{"question":"how far along are you?"}`, c.token)
	if code != http.StatusOK || !strings.Contains(body, oracleAnswer) {
		t.Errorf("POST /oracle: %d %s", code, body)
	}
	if code, body = c.do("POST", "/answer", `{"id":"q1","text":"blue"}`, c.token); code != http.StatusOK || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("POST /answer: %d %s", code, body)
	}
	// The run ends; the server stays up with the whole history and the
	// verdict, until Ctrl-C (issue 11).
	s.waitOutput(runEnded)
	if code, body := c.do("GET", "/events", "", c.token); code != http.StatusOK ||
		!strings.Contains(body, `"ended":true`) || !strings.Contains(body, `"ok":true`) || !strings.Contains(body, `"banner":true`) {
		t.Errorf("GET /events after the run: %d %s", code, body)
	}
	s.cmd.Process.Signal(os.Interrupt)
	if code := s.wait(); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, s.stdout, s.stderr)
	}
	if !strings.Contains(s.stdout.String(), "verdict passed") {
		t.Errorf("stdout:\n%s", s.stdout)
	}
	brief, _ := os.ReadFile(filepath.Join(dir, ".flower", "notes", "brief.md"))
	if !strings.Contains(string(brief), "blue") {
		t.Errorf("the answer did not reach the brief:\n%s", brief)
	}
	// The oracle kept to its own store: its session is in runs/aside, and
	// the manifest has only the starter's steps.
	if _, err := os.Stat(filepath.Join(dir, "runs", "aside", "sessions.db")); err != nil {
		t.Errorf("no aside store: %v", err)
	}
	manifest, _ := os.ReadFile(filepath.Join(dir, "runs", "manifest.json"))
	if strings.Contains(string(manifest), "oracle") || !strings.Contains(string(manifest), `"work"`) {
		t.Errorf("manifest:\n%s", manifest)
	}
}

func TestServeCtrlCStopsLikeTheTerminal(t *testing.T) {
	dir := t.TempDir()
	srv := serveModel(t)
	s := startServing(t, dir, serveEnv(srv), "serve", "make a header")
	m := s.waitOutput(servedURL)
	c := &client{t: t, base: m[1], token: m[2]}
	c.events(bounded(t), asked)
	s.cmd.Process.Signal(os.Interrupt)
	s.waitOutput(runEnded) // the page stays up; Ctrl-C again exits as the run ended
	s.cmd.Process.Signal(os.Interrupt)
	if code := s.wait(); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitInterrupted, s.stdout, s.stderr)
	}
	if errs := s.stderr.String(); !strings.Contains(errs, "stopping after the current tool") || !strings.Contains(errs, "Ctrl-C again exits at once") {
		t.Errorf("stderr:\n%s", errs)
	}
}

func TestServeRefusesBadAddressesAndTokens(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"serve", "--model", "demo", "--addr", "0.0.0.0:0", "x"}, "--allow-remote"},
		{nil, []string{"serve", "--model", "demo", "--addr", ":8080", "x"}, "--allow-remote"},
		{nil, []string{"serve", "--model", "demo", "--addr", "nonsense", "x"}, "HOST:PORT"},
		{[]string{"FLOWER_TOKEN=short"}, []string{"serve", "--model", "demo", "x"}, "FLOWER_TOKEN"},
	} {
		dir := t.TempDir()
		r := runFlower(t, dir, tc.env, tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v %v: exit %d, stderr %q; want 2 and one line naming %s", tc.env, tc.args, r.code, r.stderr, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "runs")); err == nil {
			t.Errorf("%v: a refused serve touched the run dir", tc.args)
		}
	}
}

func TestServeRefusesABusyPortBeforeTouchingAnything(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	r := runFlower(t, dir, nil, "serve", "--model", "demo", "--addr", busy.Addr().String(), "x")
	if r.code != exitFailed || !strings.Contains(r.stderr, "--addr") {
		t.Errorf("busy port: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); err == nil {
		t.Error("a serve that could not listen touched the run dir")
	}
}

func TestServeTakesTheTokenFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	srv := serveModel(t)
	const token = "my-own-token-0123456789"
	s := startServing(t, dir, serveEnv(srv, "FLOWER_TOKEN="+token), "serve", "--timeout", "0", "make a header")
	re := regexp.MustCompile(`flower: open http://127\.0\.0\.1:\d+/\?token=` + token + `\n`)
	s.waitOutput(re)
	if code := s.wait(); code != 0 {
		t.Fatalf("unattended serve: exit %d\n%s\n%s", code, s.stdout, s.stderr)
	}
}

// In the terminal, a line starting with "?" asks the oracle: the answer is
// printed, and the question waiting for the person is still waiting.
func TestTerminalOracleLine(t *testing.T) {
	dir := t.TempDir()
	srv := serveModel(t)
	s := startServing(t, dir, serveEnv(srv), "make a header")
	s.waitOutput(regexp.MustCompile(regexp.QuoteMeta("? " + serveQuestion)))
	fmt.Fprintln(s.stdin, "? how far along are you?")
	s.waitOutput(regexp.MustCompile(regexp.QuoteMeta("= " + oracleAnswer)))
	fmt.Fprintln(s.stdin, "2")
	if code := s.wait(); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, s.stdout, s.stderr)
	}
	brief, _ := os.ReadFile(filepath.Join(dir, ".flower", "notes", "brief.md"))
	if !strings.Contains(string(brief), "blue") {
		t.Errorf("the answer after the oracle line did not reach the brief:\n%s", brief)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "aside", "sessions.db")); err != nil {
		t.Errorf("no aside store: %v", err)
	}
}

// With --model demo the run ends in a moment, and the page can still open:
// the server stays up with the history and the verdict, and the page
// starts the next wake with a phrase; Ctrl-C then exits as the last wake
// did (issue 11).
func TestServeStaysUpAndStartsTheNextWake(t *testing.T) {
	dir := t.TempDir()
	s := startServing(t, dir, nil, "serve", "--model", "demo", "write a greeting file")
	m := s.waitOutput(servedURL)
	c := &client{t: t, base: m[1], token: m[2]}
	s.waitOutput(runEnded)
	if code, body := c.do("GET", "/?token="+c.token, "", ""); code != http.StatusOK || !strings.Contains(body, "The run has ended") {
		t.Fatalf("the page after the run: %d", code)
	}
	code, body := c.do("GET", "/events", "", c.token)
	if code != http.StatusOK || !strings.Contains(body, `"ended":true`) || !strings.Contains(body, `"kind":"result"`) {
		t.Fatalf("GET /events after the run: %d %s", code, body)
	}
	if code, body := c.do("POST", "/wake", `{"text":"also say goodbye"}`, c.token); code != http.StatusOK {
		t.Fatalf("POST /wake: %d %s", code, body)
	}
	twice := regexp.MustCompile(`(?s)the page stays up.*the page stays up`)
	s.waitOutput(twice)
	brief, _ := os.ReadFile(filepath.Join(dir, ".flower", "notes", "brief.md"))
	if !strings.Contains(string(brief), "also say goodbye") {
		t.Errorf("the next wake's phrase is not in the brief:\n%s", brief)
	}
	_, body = c.do("GET", "/events", "", c.token)
	if n := strings.Count(body, `"banner":true`); n != 2 {
		t.Errorf("%d banners in the history, want one per wake", n)
	}
	s.cmd.Process.Signal(os.Interrupt)
	if code := s.wait(); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, s.stdout, s.stderr)
	}
}
