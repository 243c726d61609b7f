package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClient runs flower mcp under the Go SDK's client, as Claude Code
// would run it from its .mcp.json.
func mcpClient(t *testing.T, env []string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(flowerBin, "mcp")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	cmd.Stderr = os.Stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callText calls a tool and returns its text; isErr reports a tool error.
func callText(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (text string, isErr bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text += tc.Text
		}
	}
	return text, res.IsError
}

type mcpEvents struct {
	Events []struct {
		Seq  int    `json:"seq"`
		Kind string `json:"kind"`
		Text string `json:"text"`
	} `json:"events"`
	Last  int  `json:"last"`
	Ended bool `json:"ended"`
}

// waitEvent reads the task's events until one of kind arrives (or the
// task ends, when kind is ""), each read waiting on the server side.
func waitEvent(t *testing.T, cs *sdk.ClientSession, dir string, after *int, kind string) {
	t.Helper()
	for range 2000 {
		text, isErr := callText(t, cs, "task_events", map[string]any{"directory": dir, "after": *after, "wait_s": 30})
		if isErr {
			t.Fatalf("task_events: %s", text)
		}
		var b mcpEvents
		if err := json.Unmarshal([]byte(text), &b); err != nil {
			t.Fatalf("task_events: %v: %s", err, text)
		}
		for _, e := range b.Events {
			if kind != "" && e.Kind == kind {
				*after = e.Seq
				return
			}
		}
		*after = b.Last
		if b.Ended {
			if kind != "" {
				t.Fatalf("the task ended before a %s event", kind)
			}
			return
		}
	}
	t.Fatalf("no %s event", kind)
}

// mcpStatus is task_status's structured content.
type mcpStatus struct {
	State     string `json:"state"`
	Run       string `json:"run"`
	Message   string `json:"message"`
	Questions []struct {
		ID       string `json:"id"`
		Question string `json:"question"`
	} `json:"questions"`
}

func taskStatus(t *testing.T, cs *sdk.ClientSession, dir string) mcpStatus {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "task_status", Arguments: map[string]any{"directory": dir}})
	if err != nil || res.IsError {
		t.Fatalf("task_status: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var st mcpStatus
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("task_status: %v: %s", err, b)
	}
	return st
}

// TestFlowerMCPServer drives a whole task through flower mcp with the Go
// SDK's client: start it, wait for its question, send a note, answer,
// follow it to its end and read its status (issue 13); the task runs in
// flower mcp's process (issue 19).
func TestFlowerMCPServer(t *testing.T) {
	t.Parallel()
	_, env := fakeModel(t)
	cs := mcpClient(t, env)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if want := []string{"task_answer", "task_events", "task_interrupt", "task_note", "task_start", "task_status"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	dir := filepath.Join(t.TempDir(), "proj")
	if text, isErr := callText(t, cs, "task_start", map[string]any{"directory": dir, "task": "write out.txt"}); isErr || !strings.Contains(text, "started flower in "+dir) {
		t.Fatalf("task_start: %s", text)
	}
	if text, isErr := callText(t, cs, "task_start", map[string]any{"directory": dir, "task": "again"}); !isErr || !strings.Contains(text, "already runs") {
		t.Errorf("a second task_start: %s", text)
	}
	after := 0
	waitEvent(t, cs, dir, &after, "ask")
	if st := taskStatus(t, cs, dir); st.State != "waiting" || len(st.Questions) != 1 || st.Questions[0].ID != "q1" || st.Questions[0].Question != askQuestion {
		t.Fatalf("task_status: %+v", st)
	}
	if text, isErr := callText(t, cs, "task_note", map[string]any{"directory": dir, "text": "keep it short"}); isErr {
		t.Errorf("task_note: %s", text)
	}
	if text, isErr := callText(t, cs, "task_answer", map[string]any{"directory": dir, "id": "q1", "text": askFirst}); isErr {
		t.Errorf("task_answer: %s", text)
	}
	waitEvent(t, cs, dir, &after, "")
	if st := taskStatus(t, cs, dir); st.State != "passed" || st.Run == "" || !strings.Contains(st.Message, "verdict passed") {
		t.Errorf("task_status at the end: %+v", st)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out.txt")); string(b) != "hi\n" {
		t.Errorf("out.txt holds %q", b)
	}
	brief, _ := os.ReadFile(filepath.Join(dir, ".flower", "notes", "brief.md"))
	if !strings.Contains(string(brief), "keep it short") {
		t.Errorf("the note never reached the agent: brief.md\n%s", brief)
	}
	if text, isErr := callText(t, cs, "task_interrupt", map[string]any{"directory": dir}); !isErr || !strings.Contains(text, "not running") {
		t.Errorf("task_interrupt after the end: %s", text)
	}
	if text, isErr := callText(t, cs, "task_status", map[string]any{"directory": "relative/dir"}); !isErr || !strings.Contains(text, "absolute path") {
		t.Errorf("a relative directory: %s", text)
	}
}

// TestFlowerMCPClientExit ends the client while its task waits for an
// answer: flower mcp stops the task and exits by itself, and the next
// flower mcp's task_start finishes the same run.
func TestFlowerMCPClientExit(t *testing.T) {
	t.Parallel()
	_, env := fakeModel(t)
	env = append(env, "HOME="+t.TempDir()) // the same home, so the same run dir, for both servers
	cs := mcpClient(t, env)
	dir := filepath.Join(t.TempDir(), "proj")
	if text, isErr := callText(t, cs, "task_start", map[string]any{"directory": dir, "task": "write out.txt"}); isErr {
		t.Fatalf("task_start: %s", text)
	}
	after := 0
	waitEvent(t, cs, dir, &after, "ask")
	asked := taskStatus(t, cs, dir)
	// Close closes flower mcp's stdin and waits for it to exit; had it not
	// exited by itself, the SDK would have ended it with SIGTERM.
	if err := cs.Close(); err != nil {
		t.Fatalf("flower mcp did not exit cleanly when its client left: %v", err)
	}
	cs = mcpClient(t, env)
	if text, isErr := callText(t, cs, "task_start", map[string]any{"directory": dir}); isErr {
		t.Fatalf("task_start to continue: %s", text)
	}
	after = 0
	waitEvent(t, cs, dir, &after, "")
	if st := taskStatus(t, cs, dir); st.State != "passed" || st.Run != asked.Run {
		t.Errorf("after the client came back: %+v, want run %s passed", st, asked.Run)
	}
}
