package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// startTimeout bounds connecting and listing tools: npx may first
	// fetch a package.
	startTimeout = 2 * time.Minute
	// maxBackoff caps the wait between restarts of a server that keeps dying.
	maxBackoff = 30 * time.Second
	// terminateGrace is how long a stdio server may take to exit once its
	// stdin is closed, before it is killed.
	terminateGrace = 500 * time.Millisecond
)

// server is one configured server and its connection, started on first
// use and again, with backoff, after it dies.
type server struct {
	cfg  Server
	opts *Options

	mu      sync.Mutex // guards every field below
	session *sdk.ClientSession
	proc    *os.Process // a stdio server's process group leader
	stop    func()      // releases what the running server holds (lifeline, locked thread)
	tools   []*sdk.Tool // as last listed
	listed  bool        // tools holds a listing
	stale   bool        // the server said its list changed
	fails   int         // starts failed or deaths since the last good start
	retryAt time.Time   // no restart before this
	lastErr error       // why the server is down, for calls made meanwhile
	stderr  *tail
	down    chan struct{} // tests: closed when watch notices a death
	changed chan struct{} // tests: sent to when the server says its tools changed
}

func newServer(cfg Server, opts *Options) *server {
	return &server{cfg: cfg, opts: opts, stderr: newTail(4096)}
}

// describe is how a line names the server: name and command or url.
func (s *server) describe() string {
	if s.cfg.Remote() {
		return fmt.Sprintf("%q (%s)", s.cfg.Name, s.cfg.URL)
	}
	return fmt.Sprintf("%q (%s)", s.cfg.Name, strings.Join(append([]string{s.cfg.Command}, s.cfg.Args...), " "))
}

// ensure returns a live session, starting the server if it is down and its
// backoff has passed. started reports a (re)start by this call.
func (s *server) ensure(ctx context.Context) (cs *sdk.ClientSession, started bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != nil {
		return s.session, false, nil
	}
	if now := s.opts.now(); now.Before(s.retryAt) {
		return nil, false, fmt.Errorf("%w (next restart in %v)", s.lastErr, s.retryAt.Sub(now).Round(time.Second))
	}
	cs, err = s.start(ctx)
	if err != nil {
		s.failed(err)
		return nil, true, s.lastErr
	}
	s.session, s.fails, s.lastErr = cs, 0, nil
	go s.watch(cs)
	return cs, true, nil
}

// failed records a failed start or a death and schedules the next try.
// Callers hold mu.
func (s *server) failed(err error) {
	s.fails++
	s.retryAt = s.opts.now().Add(min(time.Second<<min(s.fails-1, 10), maxBackoff))
	if t := s.stderr.String(); t != "" {
		err = fmt.Errorf("%w; stderr: %s", err, t)
	}
	s.lastErr = fmt.Errorf("server %s: %w", s.describe(), err)
}

// watch notices the server's death: the next use restarts it.
func (s *server) watch(cs *sdk.ClientSession) {
	err := cs.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != cs {
		return // closed on purpose, or already replaced
	}
	s.release()
	if err == nil {
		err = errors.New("connection closed")
	}
	s.failed(fmt.Errorf("stopped: %w", err))
	s.opts.report(fmt.Sprintf("mcp: %s; restarting it at the next use", s.lastErr))
	if s.down != nil {
		close(s.down)
	}
}

// lost drops a session that failed a call without a protocol answer (an
// HTTP server that went away keeps its session open otherwise): the next
// use reconnects, after the backoff.
func (s *server) lost(cs *sdk.ClientSession, err error) {
	s.mu.Lock()
	if s.session != cs {
		s.mu.Unlock()
		return
	}
	s.session = nil
	s.release()
	s.failed(fmt.Errorf("lost: %w", err))
	line := fmt.Sprintf("mcp: %s; reconnecting at the next use", s.lastErr)
	s.mu.Unlock()
	_ = cs.Close()
	s.opts.report(line)
}

// release drops the session and kills what is left of the server. Callers
// hold mu.
func (s *server) release() {
	if s.stop != nil {
		s.stop()
	}
	s.session, s.proc, s.stop = nil, nil, nil
}

// start connects to the server and lists its tools. Callers hold mu.
func (s *server) start(ctx context.Context) (*sdk.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	s.stderr.Reset()
	client := sdk.NewClient(&sdk.Implementation{Name: "flower", Version: "1"}, &sdk.ClientOptions{
		Capabilities:           &sdk.ClientCapabilities{}, // no roots: servers keep the directories their args name
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { s.markStale() },
	})
	var cs *sdk.ClientSession
	var err error
	if s.cfg.Remote() {
		cs, err = s.connectHTTP(ctx, client)
	} else {
		cs, err = s.spawn(ctx, client)
	}
	if err != nil {
		return nil, err
	}
	tools, err := list(ctx, cs)
	if err != nil {
		_ = cs.Close()
		s.release()
		return nil, err
	}
	s.tools, s.listed, s.stale = tools, true, false
	return cs, nil
}

func list(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.Tool, error) {
	var tools []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

func (s *server) markStale() {
	s.mu.Lock()
	s.stale = true
	ch := s.changed
	s.mu.Unlock()
	if ch != nil {
		ch <- struct{}{}
	}
}

// spawn starts a stdio server in a process group that dies with flower,
// with only PATH, HOME and the env the config names. The goroutine that
// starts it keeps its OS thread locked while the server lives, since the
// parent-death signal fires when that thread exits. Callers hold mu.
func (s *server) spawn(ctx context.Context, client *sdk.Client) (*sdk.ClientSession, error) {
	command, args, env, err := s.expandStdio()
	if err != nil {
		return nil, err
	}
	path, err := lookPath(command, env)
	if err != nil {
		return nil, err
	}
	cmd, started, end, err := s.command(path, args, env)
	if err != nil {
		return nil, err
	}
	type connected struct {
		cs  *sdk.ClientSession
		err error
	}
	done, out := make(chan struct{}), make(chan connected, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the server
		cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: terminateGrace}, nil)
		started()
		out <- connected{cs, err}
		if err == nil {
			<-done
		}
	}()
	c := <-out
	s.proc = cmd.Process
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			end() // the watcher (or the sandbox's helper) kills what the server started
			killGroup(cmd.Process)
			close(done)
		})
	}
	if c.err != nil {
		s.release()
		return nil, fmt.Errorf("start: %w", c.err)
	}
	return c.cs, nil
}

// command is the exec.Cmd of a stdio server: under the sandbox when
// Options.Contain is set, else under flower's lifeline (wrap). started
// runs after the start, end when the server stops.
func (s *server) command(path string, args, env []string) (cmd *exec.Cmd, started, end func(), err error) {
	if s.opts.Contain != nil {
		cmd = exec.Command(path, args...)
		cmd.Env, cmd.Dir, cmd.Stderr = env, s.opts.Workspace, s.stderr
		if started, end, err = s.opts.Contain(cmd); err != nil {
			return nil, nil, nil, fmt.Errorf("contain: %w", err)
		}
		return cmd, started, end, nil
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("lifeline pipe: %w", err)
	}
	cmd = wrap(path, args, lifeR)
	cmd.Env, cmd.Dir, cmd.Stderr = env, s.opts.Workspace, s.stderr
	return cmd, func() { lifeR.Close() }, func() { lifeW.Close() }, nil
}

// expandStdio resolves ${VAR} in the command, its args and env.
func (s *server) expandStdio() (command string, args, env []string, err error) {
	getenv := s.opts.getenv
	if command, err = expand(s.cfg.Command, getenv); err != nil {
		return "", nil, nil, err
	}
	for _, a := range s.cfg.Args {
		v, err := expand(a, getenv)
		if err != nil {
			return "", nil, nil, err
		}
		args = append(args, v)
	}
	env = slices.Clone(s.opts.Env)
	if s.opts.Env == nil {
		env = baseEnv(getenv)
	}
	for k, v := range s.cfg.Env {
		if v, err = expand(v, getenv); err != nil {
			return "", nil, nil, fmt.Errorf("env %s: %w", k, err)
		}
		env = append(env, k+"="+v)
	}
	return command, args, env, nil
}

// passEnv are the variables a server gets without being named: what it
// takes to find and run node or python. Nothing else of flower's
// environment (API keys above all) reaches a server.
var passEnv = []string{"PATH", "HOME", "LANG", "TMPDIR"}

func baseEnv(getenv func(string) string) []string {
	var env []string
	for _, k := range passEnv {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// lookPath finds command on the PATH the server gets, so that a missing
// command is named as such instead of as a broken pipe.
func lookPath(command string, env []string) (string, error) {
	if strings.Contains(command, "/") {
		if _, err := os.Stat(command); err != nil {
			return "", fmt.Errorf("command %s: %w", command, err)
		}
		return command, nil
	}
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range strings.Split(p, ":") {
				full := dir + "/" + command
				if fi, err := os.Stat(full); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
					return full, nil
				}
			}
		}
	}
	return "", fmt.Errorf("command %q not found in PATH (install it, or give its full path in %s)", command, FileName)
}

// connectHTTP reaches a Streamable HTTP (or legacy SSE) server, with its
// headers expanded from the environment on every start, never stored.
func (s *server) connectHTTP(ctx context.Context, client *sdk.Client) (*sdk.ClientSession, error) {
	url, err := expand(s.cfg.URL, s.opts.getenv)
	if err != nil {
		return nil, err
	}
	headers := http.Header{}
	for k, v := range s.cfg.Headers {
		v, err := expand(v, s.opts.getenv)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", k, err)
		}
		headers.Set(k, v)
	}
	hc := &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: headers}}
	var t sdk.Transport = &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}
	if s.cfg.Type == "sse" {
		t = &sdk.SSEClientTransport{Endpoint: url, HTTPClient: hc}
	}
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return cs, nil
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header[k] = v
	}
	return h.base.RoundTrip(r)
}

// listing returns the server's tools, listing them again if the server
// said they changed.
func (s *server) listing(ctx context.Context) []*sdk.Tool {
	s.mu.Lock()
	cs, stale := s.session, s.stale
	s.mu.Unlock()
	if cs != nil && stale {
		if tools, err := list(ctx, cs); err == nil {
			s.mu.Lock()
			s.tools, s.stale = tools, false
			s.mu.Unlock()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// close stops the server for good.
func (s *server) close() {
	s.mu.Lock()
	cs := s.session
	s.session = nil
	s.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
	}
	s.mu.Lock()
	s.release()
	s.retryAt = time.Now().Add(100 * 365 * 24 * time.Hour)
	s.lastErr = fmt.Errorf("server %s: closed", s.describe())
	s.mu.Unlock()
}

// kill is for tests: the server's process dies as if it crashed.
func (s *server) kill() {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	killGroup(p)
}

// tail keeps the last bytes written to it: a server's stderr, for the
// line that says why it failed.
type tail struct {
	mu  sync.Mutex // guards buf
	max int
	buf []byte
}

func newTail(n int) *tail { return &tail{max: n} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) Reset() {
	t.mu.Lock()
	t.buf = t.buf[:0]
	t.mu.Unlock()
}

// String is the last few lines, on one line.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "\uFFFD")), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.TrimSpace(strings.Join(lines, " | "))
}
