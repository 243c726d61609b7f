package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// InitEnv is the variable that turns the program into the helper; its
// value is the JSON spec of the command to run.
const InitEnv = "FLOWER_SANDBOX_INIT"

// helperName is the helper's argv[0], so that ps shows what it is.
const helperName = "flower-sandbox"

// Supported reports whether processes run under the helper here (Linux).
const Supported = true

// spec is what the helper is told to do.
type spec struct {
	Path     string   `json:"path"`
	Args     []string `json:"args"`
	Landlock bool     `json:"landlock,omitempty"`
	RW       []string `json:"rw,omitempty"`
	Network  bool     `json:"network,omitempty"`
	Mount    bool     `json:"mount,omitempty"` // a new mount namespace: mount a fresh /proc, apply the view
	Hide     []string `json:"hide,omitempty"`  // view_linux.go
	Protect  []string `json:"protect,omitempty"`
	Probe    bool     `json:"probe,omitempty"` // exit 0 at once: can the helper start this way?
	Serve    bool     `json:"serve,omitempty"` // be the run's helper: start commands asked for on fd 4
}

// Guard holds flower's end of a helper's lifeline.
type Guard struct {
	r, w *os.File
	once sync.Once
}

// Started closes flower's copy of the lifeline's read end; call it after
// cmd.Start, whether it failed or not.
func (g *Guard) Started() { _ = g.r.Close() }

// End closes the lifeline: the helper kills everything it started and
// exits. Safe to call more than once; cmd.Cancel calls it.
func (g *Guard) End() { g.once.Do(func() { _ = g.w.Close() }) }

// Wrap turns cmd, set up as for a direct run (Path, Args, Dir, Env,
// stdio), into a run of the same command under a helper of its own (one
// launch of this program per command: Start, which shares the run's
// helper, is cheaper; Wrap is for a command that must be an exec.Cmd,
// such as a stdio MCP server, started once per run): in its own
// namespaces where possible, under Landlock when s applies it, with TMPDIR
// set to the run's temp dir. A command made with exec.CommandContext
// should get Cancel = End (the helper then kills what it started) and a
// WaitDelay, after which exec kills the helper itself. The caller must not
// set SysProcAttr or ExtraFiles.
func (s *Sandbox) Wrap(cmd *exec.Cmd) (*Guard, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: find own executable: %w", err)
	}
	ns := namespaces()
	run := s.runner()
	sp := spec{Path: cmd.Path, Args: cmd.Args, Landlock: s.Landlock() > 0, RW: s.Writable(),
		Network: s.Network(), Mount: ns.mount, Hide: run.hide, Protect: run.protect}
	js, err := json.Marshal(sp)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	env := s.commandEnv(cmd.Env)
	cmd.Env = append(env, InitEnv+"="+string(js))
	cmd.Path, cmd.Args = exe, []string{helperName}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: lifeline pipe: %w", err)
	}
	g := &Guard{r: r, w: w}
	cmd.ExtraFiles = []*os.File{r} // fd 3 in the helper
	cmd.SysProcAttr = ns.attr()
	if ns.flags != 0 && run.noNet {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
	}
	return g, nil
}

// Probe finds out, once, how helpers can be started here (it starts one).
// Wrap does it on first use; a caller that times its command calls Probe
// first, so that the probe does not count against the command.
func Probe() { namespaces() }

// nsConfig is how helpers are started on this machine.
type nsConfig struct {
	flags uintptr // clone flags; 0 when namespaces are unavailable
	mount bool
	user  bool
	err   error // why there are no namespaces
}

func (n nsConfig) attr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Cloneflags: n.flags}
	if n.flags != 0 {
		// The namespace dies with its init, and its init with flower.
		// Without a namespace, the helper must outlive flower long enough
		// to kill what it started: the lifeline tells it.
		a.Pdeathsig = syscall.SIGKILL
	}
	if n.user {
		uid, gid := os.Getuid(), os.Getgid()
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
		// Not root in its namespace, the helper would lose its
		// capabilities at exec; it keeps CAP_SYS_ADMIN (of its own user
		// namespace only) to mount /proc and make each command's PID
		// namespace. Commands drop it before they exec.
		// CAP_SETPCAP lets each command drop the bounding set (dropPrivileges).
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
	}
	return a
}

var (
	nsOnce sync.Once
	nsConf nsConfig
)

// namespaces probes once, by starting a helper that exits at once, whether
// PID and mount namespaces (and a user namespace when not root) can be
// created here.
func namespaces() nsConfig {
	nsOnce.Do(func() {
		n := nsConfig{flags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS, mount: true}
		if os.Geteuid() != 0 {
			n.flags |= syscall.CLONE_NEWUSER
			n.user = true
		}
		if err := probeHelper(n); err != nil {
			n = nsConfig{err: err}
		}
		nsConf = n
	})
	return nsConf
}

func probeHelper(n nsConfig) error {
	// Whether the kernel lets us create the namespaces does not depend on
	// the program: a tiny one is cheaper to start than the helper (which
	// is flower), and only where there is none is the helper used.
	c := exec.Command("true")
	if _, err := exec.LookPath("true"); err != nil {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		js, _ := json.Marshal(spec{Probe: true})
		c = exec.Command(exe)
		c.Args = []string{helperName}
		c.Env = append(os.Environ(), InitEnv+"="+string(js))
	}
	c.SysProcAttr = n.attr()
	var out []byte
	err := withDumpable(func() error {
		var err error
		out, err = c.CombinedOutput()
		return err
	})
	if err != nil {
		return fmt.Errorf("%w %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// netNamespaces reports whether commands can get a network namespace of
// their own: wherever they get PID and mount namespaces.
func netNamespaces() bool { return namespaces().err == nil }

// namespaceNote is the one line saying processes are not in namespaces.
func namespaceNote() string {
	if err := namespaces().err; err != nil {
		return fmt.Sprintf("no PID namespaces here (%v): tool processes see the host's processes and flower's state and may change flower.yaml; a call's processes are killed at its end as a subreaper finds them, and one that double-forks at that instant may escape", err)
	}
	return ""
}

// landlockABI is the usable Landlock ABI: 0 when the kernel has none, or
// only ABI 1, which cannot allow moving files between directories.
func landlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 2 {
		return 0
	}
	return v
}

func platform() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "Linux"
	}
	var b []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	v, err := ll.LandlockGetABIVersion()
	switch {
	case errors.Is(err, syscall.EOPNOTSUPP):
		return "Linux " + string(b) + ", Landlock disabled at boot (add landlock to the lsm= kernel parameter)"
	case err != nil:
		return "Linux " + string(b) + ", no Landlock (needs Linux 5.19 or later)"
	case v < 2:
		return fmt.Sprintf("Linux %s, Landlock ABI %d is too old (needs 2: Linux 5.19)", b, v)
	}
	return "Linux " + string(b)
}

// commandEnv is the environment a command gets: env (nil: flower's own)
// without the helper's variable, with TMPDIR the run's temp dir when s
// has one.
func (s *Sandbox) commandEnv(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, InitEnv+"=") || (s.TempDir() != "" && strings.HasPrefix(kv, "TMPDIR="))
	})
	if s.TempDir() != "" {
		env = append(env, "TMPDIR="+s.TempDir())
	}
	return env
}
