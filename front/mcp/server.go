// Package mcpserver is flower as an MCP server (R11.3): an MCP client
// (Claude Code, Claude Desktop, any client of the official SDKs) starts
// tasks in directories and follows, answers, notes and interrupts them
// through six tools:
//
//	task_start     {directory, task?, stop_with_client?}  flower "task" in directory (no task: continue)
//	task_status    {directory}                   state, run, step, questions waiting, cost, turns
//	task_events    {directory, after?, kinds?, limit?, wait_s?, all?}  the events after seq N (no deltas or usage unless all)
//	task_answer    {directory, id, text}         answer a waiting question
//	task_note      {directory, text}             a note to the agent's inbox
//	task_interrupt {directory, text?}            stop at the next message boundary (text: continue with it)
//
// A task belongs to its directory, not to the client's session: a client
// (Claude Code) closes its stdio servers when it exits and may SIGTERM,
// then SIGKILL them, and a person who starts it again tomorrow expects
// task_status of yesterday's task to answer. So, with Options.Command
// set (flower mcp's default), task_start runs each task in a flower
// process of its own (launch, Drive): in a session of its own, its output
// in the run dir's LogFile. That process takes the directory through
// flower.Open (the run dir's lock: one driver per directory, never a task
// twice at once), Prepares and Starts, and says on a pipe whether the
// task started, so what prevents the task still comes back as
// task_start's error; then it drives the run to its end. Nothing of the
// task lives in the server any more: task_status, task_events and the
// steering tools read and write the directory's store (stored.go), the
// way flower serve --runs steers any run of a database (web.Stored): the
// task's process keeps its events in the workspace's stored stream and
// follows the workspace's human journal (web.Steering). Any flower mcp
// session, flower status, or flower serve --runs on a database store
// sees and steers it alike.
//
// The other way, a flower mcp that outlives its stdin, detaches from the
// client's process group and ignores SIGTERM until its tasks end, was
// weighed and not taken: it disobeys the client's (and the MCP spec's)
// way of ending a server, a SIGKILL still takes every task of the session
// down at once, and a later session still has to reach the tasks through
// the store. A task's own process costs one flower start per task_start,
// which is small beside the task.
//
// Whatever dies, nothing is lost: the runs are durable. A task whose
// process was killed shows as stopped; task_start without a task (or
// flower in that directory) continues it where it stopped, its effects
// once.
//
// The old way remains for a client that wants it (task_start's
// stop_with_client, flower mcp --tasks-stop-with-client, Options.Command
// nil, and on Windows, where no pipe is handed down): the task runs in
// this process, and when the client's session ends (stdin closes) Run
// interrupts it at its next message boundary and waits for it.
package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/wake"
)

// Options configure a Server. The zero value runs tasks with flower's
// defaults.
type Options struct {
	// Name and Version are the server's, as the client sees them
	// (default "flower", "dev").
	Name, Version string
	// Model, StoreURL, IdleTimeout, NoTrim and Secrets are every task's
	// flower.Options.
	Model       string
	StoreURL    string
	IdleTimeout time.Duration
	NoTrim      bool
	Secrets     []string
	// RunDir chooses a directory's run dir; nil, or "", is
	// flower.DefaultRunDir.
	RunDir func(workspace string) string
	// AskTimeout is how long a question waits for task_answer: a
	// duration, human.Forever, or < 0 unattended; 0 is
	// human.DefaultTimeout.
	AskTimeout time.Duration
	// Rounds, MaxTurns and Budget are every task's flower.DriveOptions;
	// 0 is the CLI's default (3 rounds, 100 turns, no budget), and
	// workflow.NoRework as Rounds judges once with no rework.
	Rounds, MaxTurns int
	Budget           float64
	// Keep is how many events a task keeps for task_events (default
	// 4000, deltas included).
	Keep int
	// Command is the argv of a task's own process: a program that calls
	// Drive with these Options (flower mcp's is itself with --drive).
	// Set, each task_start runs its task in a process of its own that
	// outlives the session; nil (and on Windows), tasks run in this
	// process and stop when the session ends.
	Command []string
}

// Server is flower as an MCP server. Its methods are safe from any
// goroutine.
type Server struct {
	opts Options
	mcp  *sdk.Server

	mu    sync.Mutex       // guards tasks
	tasks map[string]*task // by absolute directory; the last task of each

	// steered: this is a task's own process (Drive), whose task is
	// steered through the store.
	steered bool
}

// New returns a server with its six tools.
func New(o Options) *Server {
	o.Name, o.Version = cmp.Or(o.Name, "flower"), cmp.Or(o.Version, "dev")
	o.AskTimeout = cmp.Or(o.AskTimeout, human.DefaultTimeout)
	o.Rounds, o.MaxTurns, o.Keep = cmp.Or(o.Rounds, 3), cmp.Or(o.MaxTurns, 100), cmp.Or(o.Keep, 4000)
	s := &Server{opts: o, tasks: map[string]*task{}}
	s.mcp = sdk.NewServer(&sdk.Implementation{Name: o.Name, Version: o.Version}, nil)
	s.addTools()
	return s
}

// MCP is the SDK's server, for a transport Run does not cover.
func (s *Server) MCP() *sdk.Server { return s.mcp }

// Run serves one client session on t until it ends (the client closed
// it, stdin reached its end) or ctx does, then stops every task: see
// Shutdown, given ctx.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	err := s.mcp.Run(ctx, t)
	s.Shutdown(ctx)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// Shutdown stops every task at its next message boundary (a running tool
// finishes first, its result stored) and waits for them. When ctx ends
// first, the tasks are cut at once with ctx's cause (their in-flight
// step is recorded as cut) and Shutdown still waits for them. Either way
// each continues with the next task_start, or flower, in its directory.
func (s *Server) Shutdown(ctx context.Context) {
	s.mu.Lock()
	var tasks []*task
	for _, t := range s.tasks {
		t.stop("")
		tasks = append(tasks, t)
	}
	s.mu.Unlock()
	for _, t := range tasks {
		select {
		case <-t.done:
		case <-ctx.Done():
			t.cut(context.Cause(ctx))
			<-t.done
		}
	}
}

// start opens the directory for a new task, decides what it does, starts
// the runtime and hands the run to the task's goroutine. The errors a
// client can act on come back here: another process or task holds the
// directory, nothing to continue, no API key.
func (s *Server) start(ctx context.Context, dir, text string) (*task, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("directory: %w", err)
	}
	t, err := s.reserve(dir)
	if err != nil {
		return nil, err
	}
	h, plan, err := s.open(ctx, t, text)
	switch {
	case err != nil:
		t.end(StateFailed, "", "failed: "+err.Error())
	case plan.Action == wake.Pass:
		t.end(StatePassed, plan.Last.ID, fmt.Sprintf("passed: run %s passed its verdict, nothing to continue; give a task to change something", plan.Last.ID))
	case !t.started(h):
		t.end(StateStopped, "", t.stopped()) // Shutdown came first
	default:
		go s.drive(t, h, plan) // owned: Shutdown waits for t.done
		return t, nil
	}
	if h != nil {
		t.closing()
		h.Close()
	}
	t.cut(nil)
	close(t.done)
	return t, err
}

// reserve makes the directory's new task, while no other runs there.
func (s *Server) reserve(dir string) (*task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tasks[dir]; t != nil {
		if t.running() {
			return nil, fmt.Errorf("a task already runs in %s: follow it with task_status and task_events, or stop it with task_interrupt first", dir)
		}
		<-t.done // it has ended: its goroutine is closing the Host
	}
	t := newTask(dir, s.opts.Keep)
	if s.steered {
		t.steering = web.NewSteering(dir, true, os.Stderr)
	}
	s.tasks[dir] = t
	return t, nil
}

// open takes the task's directory (flower.Open), decides what the start
// does and, unless there is nothing to do (a Pass plan, counted), starts
// the Host on the task's own context: it outlives the tool call.
func (s *Server) open(ctx context.Context, t *task, text string) (*flower.Host, wake.Plan, error) {
	runDir := ""
	if s.opts.RunDir != nil {
		runDir = s.opts.RunDir(t.dir)
	}
	hasStore := s.opts.StoreURL != ""
	if d := cmp.Or(runDir, defaultRunDir(t.dir)); !hasStore && d != "" {
		hasStore = flower.HasState(d)
	}
	wo := wake.Options{Phrase: text}
	if err := wake.Check(t.dir, hasStore, wo); err != nil {
		return nil, wake.Plan{}, startErr(err, t.dir)
	}
	h, err := flower.Open(ctx, flower.Options{Workspace: t.dir, RunDir: runDir, StoreURL: s.opts.StoreURL, Model: s.opts.Model,
		IdleTimeout: s.opts.IdleTimeout, NoTrim: s.opts.NoTrim, Secrets: s.opts.Secrets, Notice: t.notes})
	if err != nil {
		return nil, wake.Plan{}, err
	}
	plan, err := h.Prepare(ctx, wo)
	switch {
	case err != nil:
		err = startErr(err, t.dir)
	case plan.Action == wake.Pass:
		err = wake.CountWake(ctx, h.Store(), h.RunDir(), t.dir)
	default:
		if plan.Cut != nil {
			t.setRun(plan.Cut.ID)
		}
		err = h.Start(t.ctx, t.startOptions(s.opts))
	}
	return h, plan, err
}

func defaultRunDir(ws string) string {
	d, _ := flower.DefaultRunDir(ws)
	return d
}

// startErr says what to do about a start refused by package wake.
func startErr(err error, dir string) error {
	var nothing *wake.NothingError
	if errors.As(err, &nothing) {
		return fmt.Errorf("nothing to continue in %s: give a task", dir)
	}
	return err
}

// drive is a task's goroutine: it owns h and closes it.
func (s *Server) drive(t *task, h *flower.Host, plan wake.Plan) {
	defer close(t.done)
	defer h.Close()
	defer t.closing()
	defer t.cut(nil)
	if t.steering != nil {
		// Detached before h closes its store, which the stream is kept in.
		defer t.steering.Attach(t.ctx, h.Channel(), h.Runtime().Interrupt, h.Store())()
	}
	o := h.Drive(t.ctx, plan, flower.DriveOptions{Rounds: s.opts.Rounds, MaxTurns: s.opts.MaxTurns, Budget: s.opts.Budget})
	t.finish(t.ctx, o, h.Runtime().TotalCost())
}

// get finds the task of a directory: the one this process drives, else
// (nil) the one its store knows, driven elsewhere.
func (s *Server) get(directory string) (*task, stored, error) {
	dir, err := absDir(directory)
	if err != nil {
		return nil, stored{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tasks[dir], s.stored(dir), nil
}

// startDetached starts the task in a process of its own (launch), unless
// a process drives the directory already. Its status's last_seq is where
// the workspace's stored stream stood before: task_events after it shows
// this task's events.
func (s *Server) startDetached(ctx context.Context, dir, text string) (Status, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Status{}, fmt.Errorf("directory: %w", err)
	}
	s.mu.Lock()
	if t := s.tasks[dir]; t != nil && t.running() {
		s.mu.Unlock()
		return Status{}, fmt.Errorf("a task already runs in %s: follow it with task_status and task_events, or stop it with task_interrupt first", dir)
	}
	delete(s.tasks, dir) // an ended task of this process: the store says the rest
	s.mu.Unlock()
	x := s.stored(dir)
	before, err := x.status(ctx)
	switch {
	case errors.Is(err, errNoTask):
	case err != nil:
		return Status{}, err
	case before.DriverPID != 0:
		return Status{}, fmt.Errorf("a task already runs in %s (flower pid %d): follow it with task_status and task_events, or stop it with task_interrupt first", dir, before.DriverPID)
	}
	st, err := s.launch(ctx, dir, text)
	st.LastSeq = before.LastSeq
	return st, err
}

func absDir(dir string) (string, error) {
	if dir == "" || !filepath.IsAbs(dir) {
		return "", fmt.Errorf("directory %q: give an absolute path", dir)
	}
	return filepath.Clean(dir), nil
}
