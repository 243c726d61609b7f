package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/flower-run/flower/hook"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/permission"
	"github.com/flower-run/flower/resilience"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
	"github.com/flower-run/flower/tool/builtin"
)

// Options build a Runtime (R2.2).
type Options struct {
	Workspace string         // the directory the agent works in (default: current directory)
	Provider  model.Provider // required
	// Store is required: the runtime never opens one, so an embedder
	// chooses the backend (store/sqlite, a PostgreSQL one) and closes it.
	Store   store.Store
	Tools   []tool.Tool  // tools beyond the built-ins (or replacing them by name)
	ToolEnv *builtin.Env // built-in tool settings; default: confined to Workspace
	Now     func() time.Time
	NewID   func() string // session and entry ids; default: random UUIDs
	// Retry governs failed model calls: its policy, clock and endpoint probe
	// (R4.3). The zero value uses the default policy, the real clock and no
	// probe; OnRetry is set by the runtime.
	Retry resilience.Retrier
	// Trim replaces, in what the model sees, large tool results from before
	// this run by a pointer to a file holding them (R4.6). The CLI turns it
	// on; --no-trim turns it off.
	Trim bool
	// HandoffAt is the fraction of the model's window at which a session
	// writes a handoff document and a new session takes over (R4.7); 0
	// means 0.8 (and at least 20K tokens left), negative never hands off.
	HandoffAt float64
	// Policies decide what happens to a call a crash cut between its intent
	// and its result (R5.4), by step (the top-level Spec.Name, which a
	// subagent inherits) and tool; the zero value retries, at most twice in
	// all (R5.7). cmd/flower reads them from flower.yaml (package config).
	Policies resume.Policies
	// Instructions, when set, returns the project's standing instructions
	// (AGENTS.md and the like, R10.2), added to every Run's system prompt.
	// It is called when a Run starts, so an edit reaches the next step.
	Instructions func() string
	// Mail, when set, is delivered to top-level runs allowed the tool
	// named MailTool, at each message boundary (R10.3; see deliverMail).
	Mail     Mailbox
	MailTool string
	// Permissions decide, before a call's intent is recorded, whether it
	// may run (R9.3); nil allows every call. Subagents share their
	// runtime's rules.
	Permissions *permission.Rules
	// Asker asks the person about a call an ask rule matched; nil means
	// no one can answer, so such calls are denied with a note.
	Asker PermissionAsker
	// Gate applies a permission mode (Claude Code's) to the rules'
	// decisions; nil applies none.
	Gate *permission.Gate
	// Secrets are scrubbed from every tool result before it is stored,
	// emitted or sent to the model (issue 10); nil scrubs nothing.
	Secrets *tool.Secrets
	// Sources offer tools known only once they start (MCP servers); their
	// tools join the registry at every model call (refreshTools).
	Sources []tool.Source
	// Hooks are the project's Claude Code hooks (package hook), run at
	// their events; nil runs none. A PreToolUse decision is durable
	// before its call runs (hooks.go).
	Hooks *hook.Runner
	// RuleOrigin names the file a permission rule came from, for the
	// message of a call it decided; nil says flower.yaml.
	RuleOrigin func(rule string) string
	// Subagents are the named subagents the Task tool offers (its
	// subagent_type); none offers only the general one.
	Subagents []Subagent
}

// Runtime runs agents against one workspace and one store.
type Runtime struct {
	workspace string
	provider  model.Provider
	store     store.Store
	tools     tool.Registry
	now       func() time.Time
	newID     func() string
	retry     resilience.Retrier
	trim      bool
	handoffAt float64
	policies  resume.Policies
	project   func() string // Options.Instructions
	mail      Mailbox
	mailTool  string
	secrets   *tool.Secrets
	sources   []tool.Source
	shells    *builtin.Shells // Bash's background commands; stopped when a top-level run ends
	perms     *permission.Rules
	asker     PermissionAsker
	hooks     *hook.Runner
	origin    func(string) string
	subagents []Subagent
	gate      *permission.Gate

	grantMu sync.Mutex      // guards grants, runID
	grants  map[string]bool // ask rules the person allowed for this run (grants.go)
	runID   string          // the workflow run grants are kept for; "" keeps them in memory

	mu         sync.Mutex // guards total, cancelTurn and sends on interrupt
	total      float64
	interrupt  chan string             // buffered 1: the latest pending interrupt
	cancelTurn context.CancelCauseFunc // cancels the top-level turn in flight, if any

	spillMu     sync.Mutex       // guards spilledSize, sealed, present
	spilledSize map[string]int64 // spill files written or checked whole by this process
	sealed      map[string]int64 // spill files listed as durable (spillseal.go)
	present     map[string]bool  // spill files there when the last view was built (listSpills); nil: unknown
}

// New builds a Runtime, opening the default store when none is given.
func New(opts Options) (*Runtime, error) {
	if opts.Provider == nil {
		return nil, errors.New("agent: no model provider")
	}
	if opts.Store == nil {
		return nil, errors.New("agent: no store: open one (store/sqlite.Open) and pass it as Options.Store")
	}
	ws, err := workspace(opts.Workspace)
	if err != nil {
		return nil, err
	}
	r := &Runtime{workspace: ws, provider: opts.Provider, store: opts.Store,
		now: opts.Now, newID: opts.NewID, retry: opts.Retry, trim: opts.Trim, handoffAt: opts.HandoffAt, policies: opts.Policies, secrets: opts.Secrets, sources: opts.Sources, interrupt: make(chan string, 1),
		perms: opts.Permissions, asker: opts.Asker, hooks: opts.Hooks, origin: opts.RuleOrigin, subagents: opts.Subagents, gate: opts.Gate,
		project: opts.Instructions, mail: opts.Mail, mailTool: opts.MailTool}
	if r.now == nil {
		r.now = time.Now
	}
	if r.newID == nil {
		r.newID = uuid.NewString
	}
	r.tools = r.registry(opts)
	return r, nil
}

func workspace(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory", abs)
	}
	return abs, nil
}

func (r *Runtime) registry(opts Options) tool.Registry {
	env := builtin.Env{Workspace: r.workspace}
	if opts.ToolEnv != nil {
		env = *opts.ToolEnv
		env.Workspace = r.workspace
	}
	if env.Shells == nil {
		env.Shells = builtin.NewShells()
	}
	r.shells = env.Shells
	tools := append(builtin.Builtins(env), &taskTool{rt: r})
	return tool.NewRegistry(append(tools, opts.Tools...)...)
}

// Workspace is the absolute workspace path.
func (r *Runtime) Workspace() string { return r.workspace }

// ToolNames are the names of the tools every run may be offered, sorted:
// the built-ins and Options.Tools (a Source's tools join at each call).
func (r *Runtime) ToolNames() []string { return r.tools.Names() }

// Store is the runtime's session store.
func (r *Runtime) Store() store.Store { return r.store }

// TotalCost is the cost of every Run of this runtime so far, in USD.
func (r *Runtime) TotalCost() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

func (r *Runtime) addCost(c float64) {
	r.mu.Lock()
	r.total += c
	r.mu.Unlock()
}

// HasSession reports whether the store holds a session of this workspace.
// It reads one entry, not the session: lineage validation calls it for
// every step of a long run.
func (r *Runtime) HasSession(id string) bool {
	_, ok, err := r.store.Last(context.Background(), r.key(id, ""), store.KindUser)
	return err == nil && ok
}

func (r *Runtime) key(id, sub string) string {
	k := store.SessionKey(r.workspace, id)
	if sub != "" {
		k += "/" + sub
	}
	return k
}

// Interrupt asks the running agent to stop at the next message boundary and
// continue its session with text as the next user message; empty text just
// stops it (R2.8). It is cooperative (seed 004): a running effect (Bash,
// Write, Edit, a subagent's Task) finishes and its result is stored, and
// the calls after it are answered as cut without running; a model answer
// streaming is cut at once (nothing of it is stored; its tokens so far are
// billed) and a pure call (a read, a question waiting) too. Safe from any
// goroutine; a newer interrupt replaces an older one not yet taken.
func (r *Runtime) Interrupt(text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.interrupt:
	default:
	}
	r.interrupt <- text
	if r.cancelTurn != nil {
		r.cancelTurn(errInterrupted)
	}
}
