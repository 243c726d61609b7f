package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

// newMCP is flower mcp: flower as an MCP server over stdio, so that Claude
// Desktop, Claude Code or any MCP client can drive durable flower runs.
// Each task runs as its own flower serve process in its directory; the
// tools speak to it over its HTTP API (front/web) with a token made here
// and never shown. Everything durable stays in that directory's run dir,
// so a task cut by a dying client continues with start_task again.
func newMCP(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve MCP over stdio: start tasks, read their status and events, answer, note, interrupt",
		Long: `flower mcp is an MCP server on stdin/stdout. Its tools:

  start_task  {directory, task?}        flower "task" in directory (no task: continue)
  task_status {directory}               running or ended, the questions waiting
  task_events {directory, after?, wait_s?}  the run's events after seq N
  answer      {directory, id, text}     answer a waiting question (id: q1...)
  send_note   {directory, text}         a note to the agent's inbox
  interrupt   {directory, text?}        stop at the next message boundary

Register it with a client, e.g. in Claude Code's .mcp.json:
  {"mcpServers": {"flower": {"command": "flower", "args": ["mcp"]}}}
--model applies to the tasks it starts; their processes stop with it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d := newMCPDriver(g)
			defer d.stopAll()
			if err := d.server().Run(cmd.Context(), &sdk.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
				return &exitError{code: exitFailed, err: fmt.Errorf("mcp: %w", err)}
			}
			return nil
		},
	}
}

// mcpDriver holds the tasks flower mcp started, by directory.
type mcpDriver struct {
	g     *globals
	exe   string
	mu    sync.Mutex          // guards tasks
	tasks map[string]*mcpTask // by absolute directory
}

// mcpTask is one flower serve process.
type mcpTask struct {
	dir, url, token string
	cmd             *exec.Cmd
	out             *tailWriter
	done            chan struct{} // closed when the process ended
	err             error         // Wait's error, once done
}

func newMCPDriver(g *globals) *mcpDriver {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return &mcpDriver{g: g, exe: exe, tasks: map[string]*mcpTask{}}
}

type dirIn struct {
	Directory string `json:"directory" jsonschema:"absolute path of the task's directory (its workspace)"`
}

type startIn struct {
	Directory string `json:"directory" jsonschema:"absolute path of the directory to work in; created if missing"`
	Task      string `json:"task,omitempty" jsonschema:"what to do; empty continues the work in flight there"`
}

type eventsIn struct {
	Directory string  `json:"directory" jsonschema:"absolute path of the task's directory"`
	After     int     `json:"after,omitempty" jsonschema:"the seq of the last event you have (0: from the start)"`
	WaitS     float64 `json:"wait_s,omitempty" jsonschema:"wait up to this many seconds for a new event or the end of the task (at most 60)"`
}

type answerIn struct {
	Directory string `json:"directory" jsonschema:"absolute path of the task's directory"`
	ID        string `json:"id" jsonschema:"the question's id, e.g. q1 (see task_status)"`
	Text      string `json:"text" jsonschema:"the answer"`
}

type textIn struct {
	Directory string `json:"directory" jsonschema:"absolute path of the task's directory"`
	Text      string `json:"text,omitempty" jsonschema:"the note for the agent"`
}

func (d *mcpDriver) server() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "flower", Version: version()}, nil)
	effect := &sdk.ToolAnnotations{}
	read := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(s, &sdk.Tool{Name: "start_task", Annotations: effect, Description: "Start flower on a task in a directory: clarify, goals, work, judge, durable across crashes. Without a task it continues what is in flight there. Returns at once; follow it with task_events and task_status."}, d.start)
	sdk.AddTool(s, &sdk.Tool{Name: "task_status", Annotations: read, Description: "Whether the task in a directory runs, how it ended, its last output, and the questions waiting for an answer (answer them with answer)."}, d.status)
	sdk.AddTool(s, &sdk.Tool{Name: "task_events", Annotations: read, Description: "The events of the running task after seq `after` (JSON: {events: [{seq, kind, text, tool, payload}], gap}); wait_s waits for the next one."}, d.events)
	sdk.AddTool(s, &sdk.Tool{Name: "answer", Annotations: effect, Description: "Answer a question the task asked (its id from task_status)."}, d.answer)
	sdk.AddTool(s, &sdk.Tool{Name: "send_note", Annotations: effect, Description: "Send a note to the running agent's inbox; it reads it at its next step."}, d.note)
	sdk.AddTool(s, &sdk.Tool{Name: "interrupt", Annotations: effect, Description: "Interrupt the running agent at the next message boundary; with text, it continues with that text as your message."}, d.interrupt)
	return s
}

func textResult(format string, args ...any) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// start runs flower serve in the directory and waits for its address.
func (d *mcpDriver) start(ctx context.Context, _ *sdk.CallToolRequest, in startIn) (*sdk.CallToolResult, any, error) {
	dir, err := absDir(in.Directory)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("directory: %w", err)
	}
	d.mu.Lock()
	if t := d.tasks[dir]; t != nil && !t.ended() {
		d.mu.Unlock()
		return nil, nil, fmt.Errorf("a task already runs in %s: follow it with task_events, or interrupt it first", dir)
	}
	d.mu.Unlock()
	t, err := d.spawn(ctx, dir, in.Task)
	if err != nil {
		return nil, nil, err
	}
	d.mu.Lock()
	d.tasks[dir] = t
	d.mu.Unlock()
	return textResult("started flower in %s (pid %d)", dir, t.cmd.Process.Pid), nil, nil
}

var servedLine = regexp.MustCompile(`flower: open (http://[^/\s]+)/\?token=`)

func (d *mcpDriver) spawn(ctx context.Context, dir, text string) (*mcpTask, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	t := &mcpTask{dir: dir, token: hex.EncodeToString(b), out: &tailWriter{max: 4096}, done: make(chan struct{})}
	// The task ends with its run: task_status reports the process's exit.
	args := []string{"serve", "--addr", "127.0.0.1:0", "--exit-after-run"}
	if d.g.model != "" {
		args = append(args, "--model", d.g.model)
	}
	if text != "" {
		args = append(args, text)
	}
	t.cmd = exec.Command(d.exe, args...)
	t.cmd.Dir = dir
	t.cmd.Env = append(os.Environ(), "FLOWER_TOKEN="+t.token)
	t.cmd.Stderr = t.out
	t.cmd.SysProcAttr = childAttr()
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start flower serve: %w", err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(t.out, line)
			if m := servedLine.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		t.err = t.cmd.Wait()
		close(t.done)
	}()
	select {
	case t.url = <-found:
		return t, nil
	case <-t.done:
		return t, nil // ended at once (nothing to continue, say): task_status tells
	case <-ctx.Done():
		_ = t.cmd.Process.Signal(syscall.SIGTERM)
		return nil, ctx.Err()
	}
}

// ending waits a little for a task whose API stopped answering to end.
func (t *mcpTask) ending() bool {
	select {
	case <-t.done:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

func (t *mcpTask) ended() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// get finds the task of a directory.
func (d *mcpDriver) get(directory string) (*mcpTask, error) {
	dir, err := absDir(directory)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.tasks[dir]
	if t == nil {
		return nil, fmt.Errorf("no task started in %s by this server: start_task first", dir)
	}
	return t, nil
}

func (d *mcpDriver) status(ctx context.Context, _ *sdk.CallToolRequest, in dirIn) (*sdk.CallToolResult, any, error) {
	t, err := d.get(in.Directory)
	if err != nil {
		return nil, nil, err
	}
	if t.ended() {
		code := 0
		var ee *exec.ExitError
		if errors.As(t.err, &ee) {
			code = ee.ExitCode()
		}
		return textResult("ended: exit %d (0: the verdict passed)\n%s", code, t.out.String()), nil, nil
	}
	asks, err := t.call(ctx, "GET", "/asks", nil)
	if err != nil {
		return nil, nil, err
	}
	return textResult("running (pid %d)\nquestions waiting: %s\n%s", t.cmd.Process.Pid, asks, t.out.String()), nil, nil
}

func (d *mcpDriver) events(ctx context.Context, _ *sdk.CallToolRequest, in eventsIn) (*sdk.CallToolResult, any, error) {
	t, err := d.get(in.Directory)
	if err != nil {
		return nil, nil, err
	}
	deadline := time.Now().Add(time.Duration(min(max(in.WaitS, 0), 60) * float64(time.Second)))
	for {
		if t.ended() {
			return textResult(`{"events":[],"gap":false,"ended":true}`), nil, nil
		}
		body, err := t.call(ctx, "GET", fmt.Sprintf("/events?after=%d", in.After), nil)
		if err != nil && t.ending() {
			continue // the server closed as the task ends: report the end
		}
		if err != nil || !strings.HasPrefix(body, `{"events":[]`) || !time.Now().Before(deadline) {
			return textResult("%s", body), nil, err
		}
		select { // the API has no long poll: look again shortly
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-t.done:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (d *mcpDriver) answer(ctx context.Context, _ *sdk.CallToolRequest, in answerIn) (*sdk.CallToolResult, any, error) {
	return d.post(ctx, in.Directory, "/answer", map[string]string{"id": in.ID, "text": in.Text})
}

func (d *mcpDriver) note(ctx context.Context, _ *sdk.CallToolRequest, in textIn) (*sdk.CallToolResult, any, error) {
	return d.post(ctx, in.Directory, "/send", map[string]string{"text": in.Text})
}

func (d *mcpDriver) interrupt(ctx context.Context, _ *sdk.CallToolRequest, in textIn) (*sdk.CallToolResult, any, error) {
	return d.post(ctx, in.Directory, "/interrupt", map[string]string{"text": in.Text})
}

func (d *mcpDriver) post(ctx context.Context, directory, path string, body any) (*sdk.CallToolResult, any, error) {
	t, err := d.get(directory)
	if err != nil {
		return nil, nil, err
	}
	b, _ := json.Marshal(body)
	out, err := t.call(ctx, "POST", path, b)
	if err != nil {
		return nil, nil, err
	}
	return textResult("%s", out), nil, nil
}

// call is one request to the task's HTTP API.
func (t *mcpTask) call(ctx context.Context, method, path string, body []byte) (string, error) {
	if t.ended() || t.url == "" {
		return "", fmt.Errorf("the task in %s is not running (task_status says how it ended)", t.dir)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.url+path, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+t.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("reach the task in %s: %w", t.dir, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s %s: %s", method, path, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// stopAll ends the tasks when the client goes: each records its step as
// killed-by-signal, and start_task continues it later.
func (d *mcpDriver) stopAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range d.tasks {
		if !t.ended() {
			_ = t.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-t.done:
			case <-time.After(30 * time.Second):
				_ = t.cmd.Process.Kill()
				<-t.done
			}
		}
	}
}

func absDir(dir string) (string, error) {
	if dir == "" || !filepath.IsAbs(dir) {
		return "", fmt.Errorf("directory %q: give an absolute path", dir)
	}
	return filepath.Clean(dir), nil
}

// tailWriter keeps the last bytes of a task's output.
type tailWriter struct {
	mu  sync.Mutex // guards buf
	max int
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > w.max {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.ToValidUTF8(string(w.buf), "\uFFFD")
}
