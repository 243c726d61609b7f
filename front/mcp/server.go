// Package mcpserver is flower as an MCP server (R11.3): an MCP client
// (Claude Code, Claude Desktop, any client of the official SDKs) starts
// tasks in directories and follows, answers, notes and interrupts them
// through six tools:
//
//	task_start     {directory, task?}            flower "task" in directory (no task: continue)
//	task_status    {directory}                   state, run, step, questions waiting, cost, turns
//	task_events    {directory, after?, wait_s?, all?}  the events after seq N (no deltas or usage unless all)
//	task_answer    {directory, id, text}         answer a waiting question
//	task_note      {directory, text}             a note to the agent's inbox
//	task_interrupt {directory, text?}            stop at the next message boundary (text: continue with it)
//
// Each task runs in this process: task_start takes the directory through
// flower.Open (its lock: one task per directory, and none while another
// flower works there), Prepare and Start, so what prevents the task comes
// back as its error; a goroutine of the task's own then Drives the run.
// Everything durable stays in the directory's run dir, so a task that
// stops (interrupted, or the client's session ended) continues with
// task_start again, or with flower in that directory.
//
// A task does not outlive the session that serves it: when the client's
// session ends (stdin closes), Run interrupts every task at its next
// message boundary and waits for it.
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
}

// Server is flower as an MCP server. Its methods are safe from any
// goroutine.
type Server struct {
	opts Options
	mcp  *sdk.Server

	mu    sync.Mutex       // guards tasks
	tasks map[string]*task // by absolute directory; the last task of each
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
	o := h.Drive(t.ctx, plan, flower.DriveOptions{Rounds: s.opts.Rounds, MaxTurns: s.opts.MaxTurns, Budget: s.opts.Budget})
	t.finish(t.ctx, o, h.Runtime().TotalCost())
}

// get finds the task of a directory.
func (s *Server) get(directory string) (*task, error) {
	dir, err := absDir(directory)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tasks[dir]
	if t == nil {
		return nil, fmt.Errorf("no task started in %s by this server: task_start first", dir)
	}
	return t, nil
}

func absDir(dir string) (string, error) {
	if dir == "" || !filepath.IsAbs(dir) {
		return "", fmt.Errorf("directory %q: give an absolute path", dir)
	}
	return filepath.Clean(dir), nil
}
