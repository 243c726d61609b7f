package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Process is a command started by Sandbox.Start.
type Process struct {
	// Under the run's helper: the command's stream socket.
	conn *net.UnixConn
	dec  *json.Decoder
	// Without namespaces: a helper of its own (Wrap).
	cmd   *exec.Cmd
	guard *Guard
}

// Start starts c in the sandbox: in PID and mount namespaces of its own,
// under Landlock when s applies it, with TMPDIR set to the run's temp
// dir. The command is started by the run's helper, which Start starts on
// first use; only where namespaces cannot be made does each command get
// a helper of its own (the subreaper fallback). A nil *Sandbox starts
// commands without Landlock, under a helper shared by the process.
func (s *Sandbox) Start(c *Cmd) (*Process, error) {
	env := s.commandEnv(c.Env)
	if namespaces().err != nil {
		return s.startWrapped(c, env)
	}
	req := request{Path: c.Path, Args: c.Args, Env: env, Dir: c.Dir,
		Landlock: s.Landlock() > 0, RW: s.Writable(), Network: s.Network()}
	r := s.runner()
	p, err := r.start(req, c)
	if errors.Is(err, errHelperGone) {
		p, err = r.start(req, c) // it died (a spurious parent-death signal?): once more, with a new one
	}
	return p, err
}

// Wait waits until the command has exited and every process it started is
// gone, and returns nil or an *ExitError with its status.
func (p *Process) Wait() error {
	if p.cmd != nil {
		err := p.cmd.Wait()
		p.guard.End()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return &ExitError{Code: ee.ExitCode()}
		}
		return err
	}
	defer p.conn.Close()
	var rep reply
	if err := p.dec.Decode(&rep); err != nil || rep.Exit == nil {
		return fmt.Errorf("sandbox: the helper ended before the command did: %v", err)
	}
	if *rep.Exit != 0 {
		return &ExitError{Code: *rep.Exit}
	}
	return nil
}

// Kill ends the command and every process it started; Wait then returns.
// Safe to call more than once, and while Wait runs.
func (p *Process) Kill() {
	if p.cmd != nil {
		p.guard.End()
		return
	}
	_ = p.conn.CloseWrite()
}

// Prestart starts the run's helper now, in the background, so that the
// first command does not wait for the launch of a whole flower (issue 19:
// a Host calls it as it starts, and the launch runs while the first model
// request is in flight). Start waits for a launch under way instead of
// making a second one; a launch that fails here is tried again, and its
// error reported, by the first Start. Close ends a prestarted helper as
// any other. Nothing is started where commands get a helper each.
func (s *Sandbox) Prestart() {
	r := s.runner()
	go func() {
		if namespaces().err != nil {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.closed && r.ctrl < 0 {
			_ = r.launch()
		}
	}()
}

// startWrapped starts c under a helper of its own (Wrap).
func (s *Sandbox) startWrapped(c *Cmd, env []string) (*Process, error) {
	cmd := &exec.Cmd{Path: c.Path, Args: c.Args, Env: env, Dir: c.Dir}
	// Nil files stay nil: exec gives /dev/null, and an *os.File nil
	// pointer in an io.Reader would not be nil.
	if c.Stdin != nil {
		cmd.Stdin = c.Stdin
	}
	if c.Stdout != nil {
		cmd.Stdout = c.Stdout
	}
	if c.Stderr != nil {
		cmd.Stderr = c.Stderr
	}
	g, err := s.Wrap(cmd)
	if err != nil {
		return nil, err
	}
	err = cmd.Start()
	g.Started()
	if err != nil {
		g.End()
		return nil, err
	}
	return &Process{cmd: cmd, guard: g}, nil
}

// runner is a run's helper process, started on first use; Widen's copies
// share their sandbox's.
type runner struct {
	mu     sync.Mutex // guards the fields below
	ctrl   int        // flower's end of the control socket; -1 when not started
	life   *os.File   // write end of the helper's lifeline
	exited chan struct{}
	closed bool
	// The helper's mount view and network (view_linux.go), fixed by New.
	hide, protect []string
	noNet         bool
}

// view sets what the helper's commands see, before it starts: the hidden
// directories, the protected paths, and no network (a network namespace
// of their own) when noNet.
func (r *runner) view(hide, protect []string, noNet bool) {
	r.hide, r.protect, r.noNet = hide, protect, noNet
}

func newRunner() *runner { return &runner{ctrl: -1} }

// shared is the runner of nil sandboxes, which lives as long as the process.
var shared = newRunner()

func (s *Sandbox) runner() *runner {
	if s == nil || s.run == nil {
		return shared
	}
	return s.run
}

// errHelperGone: the run's helper is not there any more.
var errHelperGone = errors.New("sandbox: the run's helper is gone")

// helperStarts counts the helpers started by runners, for tests.
var helperStarts atomic.Int64

// start asks the helper (started if need be) to start req with c's stdio.
func (r *runner) start(req request, c *Cmd) (*Process, error) {
	var stdio [3]*os.File
	for i, f := range []*os.File{c.Stdin, c.Stdout, c.Stderr} {
		if f == nil {
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				return nil, fmt.Errorf("sandbox: %w", err)
			}
			defer null.Close()
			f = null
		}
		stdio[i] = f
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socketpair: %w", err)
	}
	f := os.NewFile(uintptr(pair[0]), "sandbox command")
	fc, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		_ = unix.Close(pair[1])
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	conn := fc.(*net.UnixConn)
	js, err := json.Marshal(req)
	if err != nil {
		_ = unix.Close(pair[1])
		conn.Close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	// A request that fits the socket's buffer is written before the helper
	// has the socket, which it then reads at once: one round trip less.
	early := len(js) < 64<<10
	if early {
		_, err = conn.Write(js)
	}
	if err == nil {
		err = r.send(unix.UnixRights(pair[1], int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd())))
	}
	runtime.KeepAlive(&stdio)
	_ = unix.Close(pair[1])
	if err == nil && !early {
		_, err = conn.Write(js)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	p := &Process{conn: conn, dec: json.NewDecoder(conn)}
	var rep reply
	if err := p.dec.Decode(&rep); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: %v", errHelperGone, err)
	}
	if !rep.Started {
		conn.Close()
		return nil, fmt.Errorf("sandbox: %s", rep.Error)
	}
	return p, nil
}

// send sends one control message, starting the helper first if need be.
func (r *runner) send(oob []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("sandbox: closed")
	}
	if r.ctrl >= 0 {
		select {
		case <-r.exited:
			r.stopLocked()
		default:
		}
	}
	if r.ctrl < 0 {
		if err := r.launch(); err != nil {
			return err
		}
	}
	for {
		err := unix.Sendmsg(r.ctrl, []byte{0}, oob, nil, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			r.stopLocked()
			return fmt.Errorf("%w: %v", errHelperGone, err)
		}
		return nil
	}
}

// launch starts the helper: flower started again, once per run, as the
// init of new PID and mount namespaces (and a user namespace when not
// root), told to serve by InitEnv. Its parent-death signal is tied to the
// thread that forks it, so that thread stays locked to a goroutine that
// waits for the helper until it exits.
func (r *runner) launch() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("sandbox: find own executable: %w", err)
	}
	js, _ := json.Marshal(spec{Serve: true, Mount: true, Hide: r.hide, Protect: r.protect})
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: socketpair: %w", err)
	}
	ctrl := os.NewFile(uintptr(pair[1]), "sandbox control")
	defer ctrl.Close()
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		_ = unix.Close(pair[0])
		return fmt.Errorf("sandbox: lifeline pipe: %w", err)
	}
	defer lifeR.Close()
	// Only InitEnv: the helper holds no secret, and passes each command
	// the environment flower sends.
	cmd := &exec.Cmd{Path: exe, Args: []string{helperName}, Env: []string{InitEnv + "=" + string(js), "GOMAXPROCS=1"},
		ExtraFiles: []*os.File{lifeR, ctrl}, SysProcAttr: namespaces().attr()}
	if r.noNet {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
	}
	started, exited := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(exited)
		runtime.LockOSThread() // never unlocked: the thread ends with the helper
		err := withDumpable(cmd.Start)
		started <- err
		if err == nil {
			_ = cmd.Wait()
		}
	}()
	if err := <-started; err != nil {
		_ = unix.Close(pair[0])
		lifeW.Close()
		return fmt.Errorf("sandbox: start the helper: %w", err)
	}
	helperStarts.Add(1)
	r.ctrl, r.life, r.exited = pair[0], lifeW, exited
	return nil
}

// stopLocked ends the helper, and with it every command it started, and
// waits for it (bounded: it is SIGKILLed by then).
func (r *runner) stopLocked() {
	if r.ctrl < 0 {
		return
	}
	_ = unix.Close(r.ctrl)
	_ = r.life.Close()
	select {
	case <-r.exited:
	case <-time.After(5 * time.Second):
	}
	r.ctrl, r.life = -1, nil
}

// close ends the helper for good.
func (r *runner) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.stopLocked()
}
