// Package flower is the one assembly point of flower: Open takes a
// workspace for this process (its lock or lease) and opens the store it
// writes through; Start adds the model, the containment of tool
// processes, the person's channel and the agent runtime. Every front end
// (the terminal, flower serve, flower once, the worker, flower mcp) goes
// through it, and so can a Go program that embeds flower:
//
//	h, err := flower.Open(ctx, flower.Options{Workspace: dir, Model: "demo"})
//	...
//	defer h.Close()
//	if err := h.Start(ctx, flower.StartOptions{}); err != nil { ... }
//	res := h.Once(ctx, "create hello.txt", flower.OnceOptions{})
//
// Close releases everything in the reverse order and waits for what it
// started. Errors a caller can fix by asking differently are *UsageError.
package flower

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/internal/atomicfile"
	"github.com/flower-run/flower/oracle"
	"github.com/flower-run/flower/permission"
	"github.com/flower-run/flower/sandbox"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/tool"
)

// Options say where a Host works and with what.
type Options struct {
	// Workspace is the directory the agent works in ("" is the current one).
	Workspace string
	// RunDir is where durable state lives; "" is DefaultRunDir(Workspace).
	RunDir string
	// StoreURL is a postgres:// URL for runs shared by many machines; ""
	// keeps the store in RunDir (SQLite).
	StoreURL string
	// DB, when set, is the PostgreSQL store the Host leases its workspace
	// in instead of opening StoreURL: the worker's Hosts share one DB, so
	// one pool and one lease session serve all its runs (issue 19). Close
	// releases the lease and leaves DB open. With DB, the lease alone
	// keeps the workspace: no file lock is taken (see Open).
	DB *postgres.DB
	// Config is flower.yaml as loaded; nil loads it from the workspace
	// (and the user's config) with LoadConfig.
	Config *config.Config
	// Model is the model's name ("demo": the embedded fake model); "" is
	// $FLOWER_MODEL, else DefaultModel.
	Model string
	// IdleTimeout cuts a model stream silent this long; 0 is flower.yaml's
	// model.idle_timeout, else the default.
	IdleTimeout time.Duration
	// NoTrim keeps old large tool results whole in what the model sees.
	NoTrim bool
	// Secrets are more values to scrub from everything flower writes and
	// shows (a serve token), besides the keys of the environment and
	// flower.yaml's sandbox.secrets.
	Secrets []string
	// Notice receives one-line notes for a person (the sandbox's limits,
	// an imported older run dir, restored notes); nil discards them.
	Notice io.Writer
	// Adopt asks a person whether a project that moved here takes over
	// the state it left at its old path (FindProject); nil adopts it with
	// a note on Notice.
	Adopt Adopter
}

// Host is one process's hold on a workspace: its lock, its store, and once
// started, the runtime that drives its agents.
type Host struct {
	ws, runDir string
	cfg        config.Config
	opts       Options
	store      store.Store
	lost       <-chan struct{} // the lease's Lost (nil: a file lock, never lost)
	closers    []func()        // in the order taken; Close runs them backwards

	// Set by Start.
	backend *Backend
	box     *sandbox.Sandbox
	rules   *permission.Rules
	secrets *tool.Secrets
	oracle  *oracle.Oracle
	channel *human.Channel
	rt      *agent.Runtime
	sink    event.Sink // every event: secrets scrubbed, then the caller's sink and the oracle
}

// Open takes the workspace for this process and opens its store: the
// workspace's lock (one driver per workspace, R9.6), then the run dir's
// lock and SQLite store, or the workspace's lease in a PostgreSQL store
// (every write fenced by the lease). A second driver is refused at once
// with an error wrapping store.ErrBusy that names the holder. Run state
// an older flower kept in JSON files is imported.
func Open(ctx context.Context, o Options) (_ *Host, err error) {
	if o.Notice != nil {
		o.Notice = &lockedWriter{w: o.Notice}
	}
	h := &Host{opts: o}
	// Whether namespaces can be made here is asked once per process, by
	// starting a process; Start's sandbox needs the answer. Asked now, it
	// overlaps the lock and the store's creation (a sync) instead of
	// delaying the first model request (issue 19).
	go sandbox.Probe()
	defer func() {
		if err != nil {
			h.Close()
		}
	}()
	if o.Workspace == "" {
		o.Workspace = "."
	}
	if h.ws, err = filepath.Abs(o.Workspace); err != nil {
		return nil, usage("--workspace: %v", err)
	}
	if o.Config == nil {
		cfg, err := LoadConfig(h.ws)
		if err != nil {
			return nil, err
		}
		o.Config = &cfg
	}
	h.cfg, h.runDir = *o.Config, o.RunDir
	if o.DB == nil { // a worker's workspaces are named by the runs it is given
		if h.runDir, err = FindProject(h.ws, h.runDir, o.StoreURL, o.Adopt, h.notice()); err != nil {
			return nil, err
		}
	}
	if h.runDir == "" {
		if h.runDir, err = DefaultRunDir(h.ws); err != nil {
			return nil, usage("%v", err)
		}
	}
	if o.DB == nil {
		// A worker's Hosts (o.DB) take no file lock: the workspace's lease
		// is theirs, and a lease whose holder stopped is taken over, where
		// a stopped process's file lock would keep its workspace from
		// every other worker on that machine forever (issue 19).
		unlock, err := LockWorkspace(h.ws, h.runDir, time.Now())
		if err != nil {
			return nil, withStorageFix(err, h.runDir)
		}
		h.closers = append(h.closers, unlock)
	}
	s, release, lost, err := drive(ctx, h.ws, h.runDir, o.StoreURL, o.DB, h.notice())
	if err != nil {
		return nil, withStorageFix(err, h.runDir)
	}
	h.store, h.lost = s, lost
	h.closers = append(h.closers, release)
	// An older flower kept snapshots of views here, megabytes a long
	// session, that nothing reads any more (issue 19). Under the lock; a
	// failure costs disk space and nothing else.
	_ = os.RemoveAll(filepath.Join(h.runDir, oldViewsDir))
	if o.DB == nil && o.StoreURL == "" {
		h.sweep()
	}
	return h, nil
}

// sweep removes, under the run dir's lock, what killed writes left in the
// run dir: the temp files of exports and a new store's build (issue 22
// item 5). Nothing reads them; they would only pile up.
func (h *Host) sweep() {
	atomicfile.Sweep(h.runDir)
	sqlite.SweepBuilds(filepath.Join(h.runDir, StoreFile))
}

// Workspace is the absolute path of the workspace.
func (h *Host) Workspace() string { return h.ws }

// RunDir is where the workspace's durable state lives.
func (h *Host) RunDir() string { return h.runDir }

// Config is flower.yaml as loaded.
func (h *Host) Config() config.Config { return h.cfg }

// Store is the store this process writes through (under its lock or lease).
func (h *Host) Store() store.Store { return h.store }

// Lost is closed once the Host's lease on a PostgreSQL store is known
// to be gone (its session ended, or another process took it over): the
// Host's writes fail from then on, and its driver should stop. Nil on
// SQLite, whose file lock cannot be lost.
func (h *Host) Lost() <-chan struct{} { return h.lost }

// Close releases what Open and Start took, in the reverse order, and waits
// for what they started. It may be called more than once.
func (h *Host) Close() error {
	for i := len(h.closers) - 1; i >= 0; i-- {
		h.closers[i]()
	}
	h.closers = nil
	return nil
}

func (h *Host) notice() io.Writer {
	if h.opts.Notice == nil {
		return io.Discard
	}
	return h.opts.Notice
}

// lockedWriter serializes the writes of a Host's notes: the sandbox's
// namespace note is written from a goroutine of its own (contain).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// errStarted is returned by a second Start.
var errStarted = errors.New("flower: Host already started")

func (h *Host) onClose(f func()) { h.closers = append(h.closers, f) }

func noteTo(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, format+"\n", args...)
}
