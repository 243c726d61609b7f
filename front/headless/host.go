package headless

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/permission"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
)

// HostOptions are claude -p's settings of a session on a flower.Host.
type HostOptions struct {
	Out, Err   io.Writer // the protocol's lines; notes for a person
	Format     string
	Mode       permission.Mode
	PromptTool bool // --permission-prompt-tool stdio
	Debug      bool
	// The session the first message continues: Resume (an id or a unique
	// prefix), else SessionID when it exists, else with Continue the
	// newest once session of the workspace.
	Resume, SessionID string
	Continue, Fork    bool
	System, Append    string // --system-prompt, --append-system-prompt
	Schema            string // --json-schema
	MaxTurns          int
	Budget            float64
	Version           string
}

// PermitsLog is the side log of the host's permission answers.
const PermitsLog = "~headless-permits"

// Start starts h for a host program (h must be open, not started) and
// returns the Session that drives it.
func Start(ctx context.Context, h *flower.Host, o HostOptions) (*Session, error) {
	gate := permission.NewGate(o.Mode, o.PromptTool)
	late := &lateSession{}
	if err := h.Start(ctx, flower.StartOptions{Gate: gate, Asker: late, Sources: []tool.Source{late}}); err != nil {
		return nil, err
	}
	resume, err := firstSession(ctx, h, o)
	if err != nil {
		return nil, err
	}
	appendSys := o.Append
	if o.Schema != "" {
		s, err := SchemaInstructions(o.Schema)
		if err != nil {
			return nil, &flower.UsageError{Err: err}
		}
		appendSys = strings.TrimSpace(appendSys + "\n\n" + s)
	}
	debug := io.Discard
	if o.Debug {
		debug = o.Err
	}
	late.s = New(Options{Out: o.Out, Format: o.Format, Resume: resume, Gate: gate, PromptTool: o.PromptTool,
		Runner:  &hostRunner{h: h, o: o, append: appendSys, forkOf: resume},
		Journal: StoreJournal{Store: h.Store(), Key: store.SideLog(h.Workspace(), PermitsLog)},
		Debug:   debug, Warn: o.Err, Structured: o.Schema != "",
		Init: Init{Cwd: h.Workspace(), Model: h.Backend().Model, APIKeySource: apiKeySource(), Version: o.Version,
			Tools: h.Runtime().ToolNames(), MCPServers: mcpNames(h)}})
	return late.s, nil
}

// firstSession is the session the first message continues ("": a new one).
func firstSession(ctx context.Context, h *flower.Host, o HostOptions) (string, error) {
	ws := h.Workspace()
	id := o.Resume
	if id == "" && o.SessionID != "" && h.Runtime().HasSession(o.SessionID) {
		id = o.SessionID
	}
	if id == "" && o.Continue {
		metas, err := flower.Sessions(ctx, h.Store(), ws, "")
		if err != nil {
			return "", err
		}
		for _, m := range metas { // oldest first: the last once session is the newest
			if m.Agent == "once" {
				id = flower.SessionID(ws, m.Key)
			}
		}
	}
	if id == "" {
		return "", nil
	}
	id, err := flower.ResolveSession(ctx, h.Store(), ws, id)
	if err != nil {
		return "", err
	}
	return id, h.CheckSession(id)
}

// hostRunner runs each message as flower once does.
type hostRunner struct {
	h      *flower.Host
	o      HostOptions
	append string
	forkOf string // with Fork: the first run branches off this session
}

func (r *hostRunner) Run(ctx context.Context, run Run, sink event.Sink) agent.Result {
	o := flower.OnceOptions{Resume: run.Resume, Fork: r.o.Fork && run.Resume != "" && run.Resume == r.forkOf,
		MaxTurns: r.o.MaxTurns, Budget: r.o.Budget, Sink: sink, System: r.o.System, Append: r.append}
	if run.System != "" {
		o.System = run.System
	}
	if run.Append != "" {
		o.Append = strings.TrimSpace(o.Append + "\n\n" + run.Append)
	}
	res := r.h.Once(ctx, run.Prompt, o)
	r.forkOf = "" // the fork is made: later messages continue it
	return res
}

func (r *hostRunner) Interrupt() { r.h.Runtime().Interrupt("") }

// lateSession is the Session as the Host's asker and tool source: the
// Host starts before the Session exists.
type lateSession struct{ s *Session }

func (l *lateSession) AskPermission(ctx context.Context, call, q string, opts []string) (string, string, error) {
	return l.s.AskPermission(ctx, call, q, opts)
}

func (l *lateSession) AskTool(ctx context.Context, u *model.ToolUse, d permission.Decision, q string, opts []string) (string, string, error) {
	return l.s.AskTool(ctx, u, d, q, opts)
}

func (l *lateSession) Tools(ctx context.Context) []tool.Tool {
	if l.s == nil {
		return nil
	}
	return l.s.SDKServers().Tools(ctx)
}

// apiKeySource says where the API key came from, as Claude Code's init does.
func apiKeySource() string {
	if os.Getenv("ANTHROPIC_API_KEY") != "" {
		return "ANTHROPIC_API_KEY"
	}
	return "none"
}

// mcpNames are the configured MCP servers' names.
func mcpNames(h *flower.Host) []string {
	var names []string
	for name, s := range h.Config().MCP.Servers {
		if !s.Disabled {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Notes writes what the flags leave out, with --debug.
func Notes(w io.Writer, skipped []string) {
	if len(skipped) > 0 {
		fmt.Fprintf(w, "flower: debug: the host's in-process MCP servers are reached over mcp_message, not started: %s\n", strings.Join(skipped, ", "))
	}
}
