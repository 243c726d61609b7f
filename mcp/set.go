package mcp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flower-run/flower/tool"
)

// Options are what every server of a Set shares.
type Options struct {
	// Workspace is where stdio servers run and where images a tool returns
	// are saved (.flower/mcp/).
	Workspace string
	// Getenv reads ${VAR} in the config and PATH/HOME for servers;
	// default os.Getenv.
	Getenv func(string) string
	// Env is the environment a stdio server starts from, before its own
	// env: flower's through flower.yaml's env policy (tool.EnvPolicy).
	// Nil: PATH, HOME, LANG and TMPDIR from Getenv.
	Env []string
	// Report receives lines for the person: the servers and their tool
	// counts once they started, a server that failed or died. Default:
	// nothing.
	Report func(line string)
	// Contain, when set, starts stdio servers in the sandbox (Landlock,
	// namespaces) that Bash commands run in: it gets the server's command
	// as for a direct run (Path, Args, Env, Dir, Stderr set) and rewrites
	// it to run under the sandbox's helper. started is called once the
	// command has started (or failed to), end when the server is stopped:
	// then the sandbox kills everything the server started. Without it, a
	// server runs under flower's own lifeline, in a process group.
	Contain func(cmd *exec.Cmd) (started, end func(), err error)
	// Now is the clock of restart backoff; default time.Now.
	Now func() time.Time
	// OutputCap bounds the text of one result, as builtin.Env.OutputCap does
	// for built-ins; 0 means tool.DefaultOutputCap.
	OutputCap int
}

func (o *Options) getenv(k string) string {
	if o.Getenv != nil {
		return o.Getenv(k)
	}
	return os.Getenv(k)
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Options) report(line string) {
	if o.Report != nil {
		o.Report(line)
	}
}

// Set is the configured MCP servers as a tool.Source: nothing starts until
// the runtime first asks for tools (the first step that runs), then every
// server starts at once; a server that fails is one reported line and has
// no tools, never a failed run.
type Set struct {
	opts    Options
	servers []*server

	once sync.Once
	mu   sync.Mutex       // guards byName
	tool map[string]*Tool // adapters by full name, kept while their definition holds
}

var _ tool.Source = (*Set)(nil)

// New builds a Set; it starts nothing.
func New(servers []Server, opts Options) *Set {
	s := &Set{opts: opts, tool: map[string]*Tool{}}
	for _, c := range servers {
		s.servers = append(s.servers, newServer(c, &s.opts))
	}
	return s
}

// Len is the number of configured servers.
func (s *Set) Len() int { return len(s.servers) }

// Tools starts the servers on the first call and returns the tools of
// those that run, listing a server's tools again when it said they
// changed, and restarting a dead server once its backoff has passed.
func (s *Set) Tools(ctx context.Context) []tool.Tool {
	// An interrupt of the turn that happens to start the servers must not
	// leave them failed for the whole run: the start has its own timeout.
	s.once.Do(func() { s.startAll(context.WithoutCancel(ctx)) })
	var out []tool.Tool
	for _, srv := range s.servers {
		srv.mu.Lock()
		down, listed := srv.session == nil, srv.listed
		srv.mu.Unlock()
		if down && listed {
			_, _, _ = srv.ensure(ctx) // a restart; a failure is reported by the call that meets it
		}
		for _, def := range srv.listing(ctx) {
			out = append(out, s.adapter(srv, def))
		}
	}
	return out
}

// startAll starts every server concurrently and reports the banner line.
func (s *Set) startAll(ctx context.Context) {
	var wg sync.WaitGroup
	for _, srv := range s.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := srv.ensure(ctx); err != nil {
				s.opts.report(fmt.Sprintf("mcp: %v; its tools are absent", err))
			}
		}()
	}
	wg.Wait()
	if b := s.Banner(); b != "" {
		s.opts.report(b)
	}
}

// Banner lists the running servers with their tool counts, e.g.
// "mcp: files 14 tools · github 31 tools"; "" when none runs.
func (s *Set) Banner() string {
	var parts []string
	for _, srv := range s.servers {
		srv.mu.Lock()
		if srv.session != nil {
			parts = append(parts, fmt.Sprintf("%s %d tools", srv.cfg.Name, len(srv.tools)))
		}
		srv.mu.Unlock()
	}
	if len(parts) == 0 {
		return ""
	}
	return "mcp: " + strings.Join(parts, " · ")
}

// adapter returns the tool for def, the same value while def is unchanged.
func (s *Set) adapter(srv *server, def *sdk.Tool) *Tool {
	name := ToolName(srv.cfg.Name, def.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tool[name]; ok && t.def == def {
		return t
	}
	t := newTool(srv, def, &s.opts)
	s.tool[name] = t
	return t
}

// ToolName is how a server's tool is named to the model, as in Claude
// Code: mcp__<server>__<tool>.
func ToolName(server, tool string) string { return "mcp__" + server + "__" + tool }

// Close stops every server.
func (s *Set) Close() error {
	var wg sync.WaitGroup
	for _, srv := range s.servers {
		wg.Add(1)
		go func() { defer wg.Done(); srv.close() }()
	}
	wg.Wait()
	return nil
}
