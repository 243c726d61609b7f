package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/front/term"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/mem"
)

// flowerIn runs the binary like flower, with stdin as its standard input.
func flowerIn(t *testing.T, dir string, env []string, stdin string, args ...string) ran {
	t.Helper()
	cmd := exec.Command(flowerBin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	return ranOf(t, cmd)
}

func writeTurns() modeltest.Responder {
	return modeltest.Script(
		modeltest.Turn{Text: "Writing.", ToolCalls: []modeltest.ToolCall{{Name: "Write", Input: `{"file_path":"a.txt","content":"A"}`}}},
		modeltest.Turn{Text: "All done."},
	)
}

// TestOnceOutputJSON: --output-format json prints one object with Claude
// Code's fields and nothing else (issue 11).
func TestOnceOutputJSON(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewAnthropic(writeTurns())
	defer srv.Close()
	dir := t.TempDir()
	r := runFlower(t, dir, []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=test"}, "once", "--output-format", "json", "write a.txt")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var got struct {
		Type      string  `json:"type"`
		SessionID string  `json:"session_id"`
		Result    string  `json:"result"`
		IsError   *bool   `json:"is_error"`
		NumTurns  int     `json:"num_turns"`
		Cost      float64 `json:"total_cost_usd"`
		Duration  *int64  `json:"duration_ms"`
		Usage     struct {
			Input  int `json:"input_tokens"`
			Output int `json:"output_tokens"`
		} `json:"usage"`
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || strings.Count(strings.TrimSpace(r.stdout), "\n") != 0 {
		t.Fatalf("stdout is not one JSON object (%v):\n%s", err, r.stdout)
	}
	if got.Type != "result" || len(got.SessionID) != 36 || got.Result != "All done." || got.IsError == nil || *got.IsError ||
		got.NumTurns != 2 || got.Cost <= 0 || got.Duration == nil || got.Usage.Input <= 0 || got.Usage.Output <= 0 {
		t.Errorf("result object: %+v\n%s", got, r.stdout)
	}
	r = runFlower(t, dir, nil, "once", "--output-format", "yaml", "x")
	if r.code != 2 || !strings.Contains(r.stderr, "--output-format \"yaml\": use text, json or stream-json") {
		t.Errorf("an unknown format: exit %d %s", r.code, r.stderr)
	}
}

// TestOnceOutputStreamJSON: one event per line, shaped as GET /events
// serves them, then the result object.
func TestOnceOutputStreamJSON(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewAnthropic(writeTurns())
	defer srv.Close()
	dir := t.TempDir()
	r := runFlower(t, dir, []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=test"}, "once", "--output-format", "stream-json", "write a.txt")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var kinds []string
	for i, line := range lines[:len(lines)-1] {
		var e struct {
			Seq     int            `json:"seq"`
			Kind    string         `json:"kind"`
			Text    *string        `json:"text"`
			Tool    *string        `json:"tool"`
			Payload map[string]any `json:"payload"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Seq != i+1 || e.Text == nil || e.Tool == nil || e.Payload == nil {
			t.Fatalf("line %d is not an event as GET /events has them (%v): %s", i+1, err, line)
		}
		kinds = append(kinds, e.Kind)
	}
	// init first: no streamed delta comes before it (issue 23).
	if got := strings.Join(kinds, " "); !strings.HasPrefix(got, "init ") || !strings.Contains(got, "tool_call") || !strings.HasSuffix(got, "result") {
		t.Errorf("event kinds: %s", got)
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, `{"type":"result"`) || !strings.Contains(last, `"result":"All done."`) {
		t.Errorf("the last line is not the result object: %s", last)
	}
}

// TestOncePromptSources: the prompt from standard input (piped, or "-"),
// and from -f FILE, over the 128 KiB an argument may hold; --output-format
// text prints the result alone.
func TestOncePromptSources(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef", 200<<10/16) + "\nend of the big task"
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "task.md"), []byte(big), 0o644)
	for _, tt := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"piped", "from a pipe\n", []string{"once", "--output-format", "text"}, "from a pipe"},
		{"dash", "from a dash", []string{"once", "--output-format", "text", "-"}, "from a dash"},
		{"file", "", []string{"once", "--output-format", "text", "-f", "task.md"}, big},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewAnthropic(modeltest.Script(modeltest.Turn{Text: "ok: " + tt.name}))
			defer srv.Close()
			r := flowerIn(t, dir, []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=test"}, tt.stdin, tt.args...)
			if r.code != 0 || r.stdout != "ok: "+tt.name+"\n" {
				t.Fatalf("exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
			}
			if got := srv.Requests()[0].Messages[0].TextOf(); got != tt.want {
				t.Errorf("prompt: %d bytes %q..., want %d bytes", len(got), term.Clip(got, 40), len(tt.want))
			}
		})
	}
	r := flowerIn(t, dir, nil, "", "once", "-f", "missing.md")
	if r.code != 2 || !strings.Contains(r.stderr, "-f missing.md: open missing.md: no such file") {
		t.Errorf("a missing -f file: exit %d %s", r.code, r.stderr)
	}
	r = flowerIn(t, dir, nil, "", "once", "-f", "task.md", "and an argument")
	if r.code != 2 || !strings.Contains(r.stderr, "not both") {
		t.Errorf("-f and an argument: exit %d %s", r.code, r.stderr)
	}
}

// TestWorkflowTaskFile: flower -f task.md gives the workflow a task over
// 128 KiB, which no argument can carry.
func TestWorkflowTaskFile(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a long specification line\n", 150<<10/26) + "the end"
	srv, env := fakeModel(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "task.md"), []byte(big), 0o644)
	r := runFlower(t, dir, env, append(args(), "-f", "task.md")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	first := ofStep(srv.Requests(), "clarify")[0].Messages[0].TextOf()
	if !strings.Contains(first, strings.TrimSpace(big)) {
		t.Errorf("clarify's prompt lacks the task (%d bytes)", len(first))
	}
}

// TestSessionsAndPrefixes: flower sessions lists the sessions; show and
// once --resume take a unique prefix of an id.
func TestSessionsAndPrefixes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runFlower(t, dir, nil, "once", "--model", "demo", "--output-format", "json", "say hello\nsecond line")
	var res struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != 0 {
		t.Fatalf("once: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	r = runFlower(t, dir, nil, "sessions")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[1], res.SessionID+"  once  ") ||
		!strings.Contains(lines[1], "  4  ") || !strings.HasSuffix(lines[1], "say hello") {
		t.Fatalf("sessions: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	prefix := res.SessionID[:6]
	if r = runFlower(t, dir, nil, "show", prefix); r.code != 0 || !strings.Contains(r.stdout, "say hello") {
		t.Errorf("show %s: exit %d\n%s%s", prefix, r.code, r.stdout, r.stderr)
	}
	r = runFlower(t, dir, nil, "once", "--model", "demo", "--output-format", "json", "--resume", prefix, "more")
	if r.code != 0 || !strings.Contains(r.stdout, res.SessionID) {
		t.Errorf("once --resume %s: exit %d\n%s%s", prefix, r.code, r.stdout, r.stderr)
	}
}

func TestResolveSessionPrefix(t *testing.T) {
	ctx := context.Background()
	s := mem.New()
	ws := "/w"
	for _, id := range []string{"abc123", "abd456", "abc123/sub/x1"} {
		if err := s.PutMeta(ctx, store.Meta{Key: store.SessionKey(ws, id), Created: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ in, want, err string }{
		{"abc123", "abc123", ""},
		{"abc", "abc123", ""},
		{"abd", "abd456", ""},
		{"zz", "zz", ""},
		{"ab", "", `session prefix "ab" is ambiguous: abc123, abd456 (give more of the id)`},
	} {
		got, err := resolveSession(ctx, s, ws, tt.in)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("resolveSession(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// TestVersionAndSessionsAreCommands: the words issue 11 found taken as
// tasks are commands now, and write nothing.
func TestVersionAndSessionsAreCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if r := runFlower(t, dir, nil, "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "flower version ") {
		t.Errorf("flower version: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := runFlower(t, dir, nil, "sessions"); r.code != 0 || !strings.HasPrefix(r.stdout, "no sessions in ") {
		t.Errorf("flower sessions: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); err == nil {
		t.Error("version or sessions created a run dir")
	}
}

// TestAuthErrorNamesTheVariable: a key the API refuses ends once and a
// wake with one line naming the variable to check, not "retry" (issue 23).
func TestAuthErrorNamesTheVariable(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewAnthropic(func(*modeltest.Request) modeltest.Turn {
		return modeltest.Turn{Fault: &modeltest.Fault{Status: 401, Type: "authentication_error", Message: "invalid x-api-key"}}
	})
	defer srv.Close()
	env := []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=wrong-key"}
	for _, args := range [][]string{{"once", "say hi"}, {"--timeout", "0", "say hi"}} {
		r := runFlower(t, t.TempDir(), env, args...)
		last := strings.TrimSpace(r.stderr)
		if i := strings.LastIndex(last, "\n"); i >= 0 {
			last = last[i+1:]
		}
		if r.code == 0 || !strings.Contains(last, "ANTHROPIC_API_KEY") || strings.Contains(last, "retry") || strings.Contains(r.stderr, "goroutine") {
			t.Errorf("flower %v: exit %d, last line %q; want it to name ANTHROPIC_API_KEY\n%s", args, r.code, last, r.stderr)
		}
	}
}

// TestOnceGivesUpOffline: with the endpoint unreachable, flower once says
// once what it cannot reach and that Ctrl-C is safe, then gives up after
// --offline-timeout with exit code 75 instead of probing forever (issue 23).
func TestOnceGivesUpOffline(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close() // nothing listens there now: connection refused, probes fail
	r := runFlower(t, t.TempDir(), []string{"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=test"},
		"once", "--offline-timeout", "1s", "say hi")
	all := r.stdout + r.stderr
	if r.code != 75 || strings.Count(all, "cannot reach "+url) != 1 || !strings.Contains(all, "Ctrl-C is safe") ||
		!strings.Contains(r.stderr, "flower once --resume") {
		t.Fatalf("exit %d, want 75 with one offline notice naming %s\nstdout:\n%s\nstderr:\n%s", r.code, url, r.stdout, r.stderr)
	}
}
