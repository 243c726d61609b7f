// Package headless speaks Claude Code's headless protocol (claude -p), so
// that a script written for Claude Code, or any Claude Agent SDK program
// (TypeScript or Python), drives flower unchanged: the output formats text,
// json and stream-json with Claude Code's line shapes (system/init,
// assistant, user, result), and the stream-json input, where user messages
// and control requests (initialize, interrupt, set_permission_mode, the
// host's answers to can_use_tool) arrive on standard input, many in one
// process, and are answered in turn.
//
// Each user message is one agent run of the same session (the first may
// resume one), so everything flower guarantees holds under a host: a host
// that dies, or a flower SIGKILLed mid-call, is continued by the next
// start with --resume with no effect repeated.
package headless

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/permission"
	"github.com/flower-run/flower/tool"
)

// Output formats (--output-format).
const (
	FormatText       = "text"
	FormatJSON       = "json"
	FormatStreamJSON = "stream-json"
)

// Run is one run of the session: the prompt, the session to continue ("":
// a new one) and the system prompt the host set at initialize ("": the
// default). It must send the run's events to sink.
type Run struct {
	Prompt, Resume, System, Append string
}

// Runner runs the agent; Interrupt stops the run in flight at its next
// message boundary.
type Runner interface {
	Run(ctx context.Context, r Run, sink event.Sink) agent.Result
	Interrupt()
}

// Init is what system/init tells the host about this process.
type Init struct {
	Cwd, Model, APIKeySource, Version string
	Tools, MCPServers, SlashCommands  []string
}

// Options shape a Session.
type Options struct {
	Out     io.Writer
	Format  string // FormatText (""), FormatJSON or FormatStreamJSON
	Resume  string // the session the first run continues
	Init    Init
	Gate    *permission.Gate // the permission mode set_permission_mode changes; nil: none
	Runner  Runner
	Journal Journal // where the host's permission answers are kept; nil: not kept
	// Structured: the run was asked for JSON (--json-schema); the result
	// line carries it as structured_output.
	Structured bool
	// PromptTool: the host answers can_use_tool (--permission-prompt-tool
	// stdio); without it a call that needs a yes is denied.
	PromptTool bool
	// Debug receives one-line notes (an unsupported control request);
	// Warn what the host asked for and does not get (its hooks of events
	// flower does not run).
	Debug, Warn io.Writer
	Now         func() time.Time
}

// Session is one process's conversation with a host.
type Session struct {
	o   Options
	out *lineWriter

	mu        sync.Mutex // guards running, session, system, pending
	running   bool
	session   string
	system    []string // initialize's systemPrompt / appendSystemPrompt
	appendSys string
	pending   map[string]chan controlReply // requests to the host awaiting its reply
	closed    bool                         // the input ended: no reply can come
	gone      bool                         // writing to the host failed
	pre       []*hookMatcher               // the host's PreToolUse hooks
	sdkNames  []string                     // the host's in-process MCP servers (initialize)
	rpcID     int                          // the last JSON-RPC id sent to them

	sdkMu     sync.Mutex             // serializes listing the servers' tools; guards sdkListed
	sdkListed map[string][]tool.Tool // each server's tools, once listed
}

// New returns a Session writing to o.Out.
func New(o Options) *Session {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Debug == nil {
		o.Debug = io.Discard
	}
	if o.Warn == nil {
		o.Warn = io.Discard
	}
	if o.Format == "" {
		o.Format = FormatText
	}
	s := &Session{o: o, session: o.Resume, pending: map[string]chan controlReply{}}
	s.out = &lineWriter{w: o.Out, failed: s.hostGone}
	return s
}

// hostGone is called once writing to the host failed: it is gone (its
// end of the pipe closed), so no one reads what the run does any more.
// The run in flight stops at its next message boundary, as after an
// interrupt, and the requests waiting for the host settle unanswered; a
// later start with --resume continues the session.
func (s *Session) hostGone() {
	s.mu.Lock()
	running := s.running
	s.gone = true
	s.mu.Unlock()
	if running {
		s.o.Runner.Interrupt()
	}
	s.cancelPending()
}

// Once runs prompt alone (text input) and writes the output format's
// lines; it returns the run's result.
func (s *Session) Once(ctx context.Context, prompt string) agent.Result {
	return s.turn(ctx, prompt)
}

// turn runs one user message to its end.
func (s *Session) turn(ctx context.Context, prompt string) agent.Result {
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		return agent.Result{SessionID: s.session, Stop: agent.StopInterrupted, Error: "the host is gone"}
	}
	s.running = true
	r := Run{Prompt: prompt, Resume: s.session, Append: s.appendSys}
	if len(s.system) > 0 {
		r.System = joinNonEmpty(s.system)
	}
	s.mu.Unlock()
	t := newTranslator(s, s.o.Now())
	res := s.o.Runner.Run(ctx, r, t.sink)
	s.mu.Lock()
	s.running = false
	if res.SessionID != "" {
		s.session = res.SessionID
	}
	s.mu.Unlock()
	t.finish(res)
	return res
}

func joinNonEmpty(parts []string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += "\n\n"
		}
		out += p
	}
	return out
}

// sessionID is the session as known now.
func (s *Session) sessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session
}

// lineWriter writes one JSON value per line, whole, from any goroutine;
// failed is called once, on the first write that fails.
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	failed func()
	broken bool
}

// put writes b; the caller holds l.mu.
func (l *lineWriter) put(b []byte) {
	if l.broken {
		return
	}
	if _, err := l.w.Write(b); err != nil && l.failed != nil {
		l.broken = true
		go l.failed() // not under l.mu: it may write (a cancel) itself
	}
}

func (l *lineWriter) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"type": "system", "subtype": "error", "error": err.Error()})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.put(append(b, '\n'))
}

func (l *lineWriter) text(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.put([]byte(s + "\n"))
}

func newUUID() string { return uuid.NewString() }
