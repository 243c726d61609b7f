package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flower-run/flower/model/modeltest"
)

// mcpClient runs flower mcp under the Go SDK's client, as Claude Code
// would run it from its .mcp.json.
func mcpClient(t *testing.T, env []string, args ...string) *sdk.ClientSession {
	t.Helper()
	cs, _ := mcpProcess(t, env, args...)
	return cs
}

// mcpProcess is mcpClient with flower mcp's process.
func mcpProcess(t *testing.T, env []string, args ...string) (*sdk.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(flowerBin, append([]string{"mcp"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	cmd.Stderr = os.Stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd
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
	DriverPID int    `json:"driver_pid"`
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

// TestFlowerMCPClientExit ends the client, started with
// --tasks-stop-with-client, while its task waits for an answer: flower mcp
// stops the task and exits by itself, and the next flower mcp's
// task_start finishes the same run.
func TestFlowerMCPClientExit(t *testing.T) {
	t.Parallel()
	_, env := fakeModel(t)
	env = append(env, "HOME="+t.TempDir()) // the same home, so the same run dir, for both servers
	cs := mcpClient(t, env, "--tasks-stop-with-client")
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
	if st := taskStatus(t, cs, dir); st.State != "stopped" || st.Run != asked.Run {
		t.Errorf("after the client left: %+v, want run %s stopped", st, asked.Run)
	}
	if text, isErr := callText(t, cs, "task_start", map[string]any{"directory": dir}); isErr {
		t.Fatalf("task_start to continue: %s", text)
	}
	waitEnd(t, cs, dir)
	if st := taskStatus(t, cs, dir); st.State != "passed" || st.Run != asked.Run {
		t.Errorf("after the client came back: %+v, want run %s passed", st, asked.Run)
	}
}

// playCounting is play whose work step's Bash also appends a line to
// effect.log: the lines count the effect.
func playCounting(r *modeltest.Request) modeltest.Turn {
	turn := play(r)
	for i, c := range turn.ToolCalls {
		if c.Name == "Bash" && stepOf(r.System) == "work" {
			turn.ToolCalls[i].Input = `{"command":"echo ran >> effect.log; cat out.txt"}`
		}
	}
	return turn
}

// waitEnd follows the task in dir until it ends.
func waitEnd(t *testing.T, cs *sdk.ClientSession, dir string) {
	t.Helper()
	after := taskStatusSeq(t, cs, dir)
	waitEvent(t, cs, dir, &after, "")
}

func taskStatusSeq(t *testing.T, cs *sdk.ClientSession, dir string) int {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "task_status", Arguments: map[string]any{"directory": dir}})
	if err != nil || res.IsError {
		t.Fatalf("task_status: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var st struct {
		LastSeq int `json:"last_seq"`
	}
	_ = json.Unmarshal(b, &st)
	return st.LastSeq
}

// answerToTheEnd answers the question st shows with the first option and
// follows the task to its end: run passes, its effect done once.
func answerToTheEnd(t *testing.T, cs *sdk.ClientSession, dir string, st mcpStatus, run string) {
	t.Helper()
	if text, isErr := callText(t, cs, "task_answer", map[string]any{"directory": dir, "id": st.Questions[0].ID, "text": askFirst}); isErr {
		t.Fatalf("task_answer: %s", text)
	}
	waitEnd(t, cs, dir)
	if st := taskStatus(t, cs, dir); st.State != "passed" || st.Run != run {
		t.Errorf("at the end: %+v, want run %s passed", st, run)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "effect.log")); string(b) != "ran\n" {
		t.Errorf("effect.log holds %q, want the effect once", b)
	}
}

// askingMCPTask starts a task (playCounting) through flower mcp and waits
// for its question: env is flower mcp's, server its process, asked the
// status once the task asks.
func askingMCPTask(t *testing.T) (env []string, cs *sdk.ClientSession, server *exec.Cmd, dir string, asked mcpStatus) {
	t.Helper()
	_, env = fakeModelWith(t, playCounting)
	env = append(env, "HOME="+t.TempDir()) // the same home, so the same run dir, for every server
	cs, server = mcpProcess(t, env)
	dir = filepath.Join(t.TempDir(), "proj")
	if text, isErr := callText(t, cs, "task_start", map[string]any{"directory": dir, "task": "write out.txt"}); isErr {
		t.Fatalf("task_start: %s", text)
	}
	after := 0
	waitEvent(t, cs, dir, &after, "ask")
	asked = taskStatus(t, cs, dir)
	killTask(t, asked.DriverPID)
	return env, cs, server, dir, asked
}

// killTask kills a task's own process if the test left it running.
func killTask(t *testing.T, pid int) {
	t.Cleanup(func() { _ = kill(pid) })
}

// kill SIGKILLs process pid.
func kill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// TestMCPTaskOutlivesClient (issue 23 item 6) starts a task through flower
// mcp and ends the client while the task waits for an answer: flower mcp
// exits, the task goes on in its own process, and a new flower mcp's
// task_status shows it waiting; the answer through the new session
// finishes the same run, its effect done once.
func TestMCPTaskOutlivesClient(t *testing.T) {
	t.Parallel()
	env, cs, _, dir, asked := askingMCPTask(t)
	if err := cs.Close(); err != nil {
		t.Fatalf("flower mcp did not exit cleanly when its client left: %v", err)
	}
	cs = mcpClient(t, env)
	st := taskStatus(t, cs, dir)
	if st.State != "waiting" || st.Run != asked.Run || st.DriverPID != asked.DriverPID || len(st.Questions) != 1 {
		t.Fatalf("task_status in a new flower mcp: %+v, want run %s waiting in pid %d", st, asked.Run, asked.DriverPID)
	}
	status := exec.Command(flowerBin, "status")
	status.Dir, status.Env = dir, append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	if r := ranOf(t, status); r.code != 0 || !strings.Contains(r.stdout, asked.Run) || !strings.Contains(r.stdout, strconv.Itoa(asked.DriverPID)) {
		t.Errorf("flower status in the task's directory, exit %d, does not name run %s driven by pid %d:\n%s%s", r.code, asked.Run, asked.DriverPID, r.stdout, r.stderr)
	}
	answerToTheEnd(t, cs, dir, st, asked.Run)
}

// TestMCPTaskSurvivesKill SIGKILLs flower mcp while its task waits for an
// answer: the task goes on, and a new flower mcp sees it waiting. Then
// its own process is SIGKILLed too: task_status says it stopped,
// task_start continues the same run, and the effect is done once.
func TestMCPTaskSurvivesKill(t *testing.T) {
	t.Parallel()
	env, _, server, dir, asked := askingMCPTask(t)
	if err := server.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cs := mcpClient(t, env)
	if st := taskStatus(t, cs, dir); st.State != "waiting" || st.Run != asked.Run || st.DriverPID != asked.DriverPID {
		t.Fatalf("task_status after flower mcp was killed: %+v, want run %s waiting in pid %d", st, asked.Run, asked.DriverPID)
	}
	if err := kill(asked.DriverPID); err != nil {
		t.Fatal(err)
	}
	waitEnd(t, cs, dir)
	if st := taskStatus(t, cs, dir); st.State != "stopped" || st.Run != asked.Run {
		t.Fatalf("task_status once the task's process was killed: %+v", st)
	}
	// The seq before task_start: the continued task may ask again before
	// a read after it, and the next "ask" event would then be the
	// question's timeout, 30 minutes later (CI, stop 28).
	after := taskStatusSeq(t, cs, dir)
	if text, isErr := callText(t, cs, "task_start", map[string]any{"directory": dir}); isErr {
		t.Fatalf("task_start to continue: %s", text)
	}
	waitEvent(t, cs, dir, &after, "ask")
	st := taskStatus(t, cs, dir)
	killTask(t, st.DriverPID)
	if st.State != "waiting" || len(st.Questions) != 1 {
		t.Fatalf("the continued task: %+v", st)
	}
	answerToTheEnd(t, cs, dir, st, asked.Run)
}
