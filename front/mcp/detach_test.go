//go:build unix

package mcpserver_test

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	mcpserver "github.com/flower-run/flower/front/mcp"
	"github.com/flower-run/flower/store/postgres/pgtest"
)

// driveEnv, set, makes the test binary a task's own process (Drive) on
// the model named by driveModel: the tests below launch it as flower
// mcp launches itself.
const (
	driveEnv   = "FLOWER_MCP_TEST_DRIVE"
	driveModel = "FLOWER_MCP_TEST_MODEL"
	driveStore = "FLOWER_MCP_TEST_STORE"
)

func TestMain(m *testing.M) {
	if os.Getenv(driveEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		err := mcpserver.New(mcpserver.Options{Model: os.Getenv(driveModel), StoreURL: os.Getenv(driveStore)}).Drive(ctx, os.Stdin, mcpserver.ReadyFile())
		stop()
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// detachedModel is askingModel with tasks in processes of their own: the
// test binary, as Drive, on the store at url ("": the run dir's SQLite).
func detachedModel(t *testing.T, heard *atomic.Bool, url string) mcpserver.Options {
	t.Helper()
	o := askingModel(t, heard)
	o.StoreURL = url
	t.Setenv(driveStore, url)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o.Command = []string{exe}
	t.Setenv(driveEnv, "1")
	t.Setenv(driveModel, o.Model)
	return o
}

// killOnCleanup kills the task's process if a failed test left it running.
func killOnCleanup(t *testing.T, pid int) {
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
}

// askingTask starts a task in a process of its own and waits for its
// question: first is task_start's status, asked the one of the question.
func askingTask(t *testing.T, o mcpserver.Options) (cs *session, dir string, first, asked mcpserver.Status) {
	t.Helper()
	cs = connect(t, mcpserver.New(o))
	dir = filepath.Join(t.TempDir(), "proj")
	if text, isErr := cs.call(t, "task_start", map[string]any{"directory": dir, "task": "say hello"}, &first); isErr {
		t.Fatalf("task_start: %s", text)
	}
	killOnCleanup(t, first.DriverPID)
	return cs, dir, first, cs.waitState(t, dir, mcpserver.StateWaiting)
}

// TestTaskOutlivesSession ends the client's session while its task waits
// for an answer (issue 23 item 6): the task's own process goes on, and a
// session of a new server sees the question through the store, answers
// it with an option's number and a note, and follows the same run to its
// verdict.
func TestTaskOutlivesSession(t *testing.T) { outlivesSession(t, "") }

// TestTaskOutlivesSessionOnPostgres is TestTaskOutlivesSession on a
// PostgreSQL store: the task's process follows the journal woken by
// notifications, and the servers steer it through the database.
func TestTaskOutlivesSessionOnPostgres(t *testing.T) { outlivesSession(t, pgtest.URL(t)) }

func outlivesSession(t *testing.T, url string) {
	var heard atomic.Bool
	o := detachedModel(t, &heard, url)
	cs := connect(t, mcpserver.New(o))
	dir := filepath.Join(t.TempDir(), "proj")
	var started mcpserver.Status
	if text, isErr := cs.call(t, "task_start", map[string]any{"directory": dir, "task": "say hello"}, &started); isErr || !strings.Contains(text, "process of its own") {
		t.Fatalf("task_start: %s", text)
	}
	if started.DriverPID == 0 || started.DriverPID == os.Getpid() {
		t.Fatalf("task_start: driver pid %d, want a process of the task's own", started.DriverPID)
	}
	killOnCleanup(t, started.DriverPID)
	if text, isErr := cs.call(t, "task_start", map[string]any{"directory": dir, "task": "again"}, nil); !isErr || !strings.Contains(text, "already runs") {
		t.Errorf("a second task_start: %s", text)
	}
	asked := cs.waitState(t, dir, mcpserver.StateWaiting)
	cs.end(t)

	cs = connect(t, mcpserver.New(o)) // a later flower mcp
	st := cs.status(t, dir)
	if st.State != mcpserver.StateWaiting || st.Run != asked.Run || st.DriverPID != started.DriverPID ||
		len(st.Questions) != 1 || st.Questions[0].ID != "q1" || st.Questions[0].Question != question {
		t.Fatalf("task_status in a new session: %+v, want run %s waiting on q1 in pid %d", st, asked.Run, started.DriverPID)
	}
	if text, isErr := cs.call(t, "task_note", map[string]any{"directory": dir, "text": note}, nil); isErr {
		t.Errorf("task_note: %s", text)
	}
	if text, isErr := cs.call(t, "task_answer", map[string]any{"directory": dir, "id": "q9", "text": "x"}, nil); !isErr || !strings.Contains(text, "q9") {
		t.Errorf("an answer to no question: %s", text)
	}
	if text, isErr := cs.call(t, "task_answer", map[string]any{"directory": dir, "id": "q1", "text": "1"}, nil); isErr {
		t.Errorf("task_answer: %s", text)
	}
	end := cs.waitState(t, dir, mcpserver.StatePassed)
	if end.Run != asked.Run || !strings.Contains(end.Message, "verdict passed") {
		t.Errorf("at the end: %+v, want run %s passed", end, asked.Run)
	}
	brief, _ := os.ReadFile(filepath.Join(dir, ".flower", "notes", "brief.md"))
	if !strings.Contains(string(brief), question+" The person answered: hello") {
		t.Errorf("the answer never reached the agent: brief.md\n%s", brief)
	}
	if !heard.Load() {
		t.Error("the note never reached the model")
	}
	var evs mcpserver.Events
	cs.call(t, "task_events", map[string]any{"directory": dir, "kinds": []string{"ask", "result"}}, &evs)
	if n := len(evs.Events); !evs.Ended || n < 5 || evs.Events[0].Kind != "ask" || evs.Events[0].Payload["id"] != "q1" || evs.Events[n-1].Kind != "result" {
		t.Errorf("the stored events of the task, asks and results: %+v", evs)
	}
}

// TestKilledTaskContinues kills a task's own process (SIGKILL) while it
// waits for an answer: task_status says it stopped, task_start without a
// task continues the same run in a new process, which asks again, and an
// answer through the store finishes it.
func TestKilledTaskContinues(t *testing.T) {
	var heard atomic.Bool
	cs, dir, first, asked := askingTask(t, detachedModel(t, &heard, ""))
	if err := syscall.Kill(first.DriverPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st := cs.waitState(t, dir, mcpserver.StateStopped)
	if st.Run != asked.Run || !strings.Contains(st.Message, "task_start without a task") {
		t.Errorf("task_status once its process was killed: %+v", st)
	}
	if text, isErr := cs.call(t, "task_note", map[string]any{"directory": dir, "text": note}, nil); !isErr || !strings.Contains(text, "not running") {
		t.Errorf("task_note with nothing driving: %s", text)
	}
	var again mcpserver.Status
	if text, isErr := cs.call(t, "task_start", map[string]any{"directory": dir}, &again); isErr {
		t.Fatalf("task_start to continue: %s", text)
	}
	killOnCleanup(t, again.DriverPID)
	if st := cs.waitState(t, dir, mcpserver.StateWaiting); st.Run != asked.Run || st.DriverPID != again.DriverPID {
		t.Fatalf("the continued task: %+v, want run %s asking in pid %d", st, asked.Run, again.DriverPID)
	}
	if text, isErr := cs.call(t, "task_answer", map[string]any{"directory": dir, "id": "q1", "text": "hello"}, nil); isErr {
		t.Fatalf("task_answer: %s", text)
	}
	if st := cs.waitState(t, dir, mcpserver.StatePassed); st.Run != asked.Run {
		t.Errorf("at the end: %+v, want run %s passed", st, asked.Run)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || strings.TrimSpace(string(b)) != "hello" {
		t.Errorf("hello.txt: %q %v", b, err)
	}
}

// TestInterruptThroughTheStore stops a task driven by its own process
// with task_interrupt while it asks.
func TestInterruptThroughTheStore(t *testing.T) {
	var heard atomic.Bool
	cs, dir, _, asked := askingTask(t, detachedModel(t, &heard, ""))
	if text, isErr := cs.call(t, "task_interrupt", map[string]any{"directory": dir}, nil); isErr {
		t.Fatalf("task_interrupt: %s", text)
	}
	if st := cs.waitState(t, dir, mcpserver.StateStopped); st.Run != asked.Run {
		t.Errorf("after task_interrupt: %+v", st)
	}
}
