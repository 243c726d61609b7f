// Package sandbox confines the processes tools start (Bash, stdio MCP
// servers): what they may write, whether they may use TCP, and how long
// they may live (SPEC R9.2, R9.4).
//
// On Linux every such process is started through the run's helper: the
// running program itself (os.Executable), re-executed once per Sandbox,
// on its first Start, with the FLOWER_SANDBOX_INIT variable set, which
// this package's init function recognizes before any other code runs
// (issue 19: starting flower again for every Bash call cost a launch of
// the whole binary per call). The helper
//
//   - is the init (pid 1) of a new PID namespace (with a new user
//     namespace when not root) and of a new mount namespace with its own
//     /proc; when it exits, the kernel kills everything in the namespace;
//   - dies with flower: the parent-death signal, and a "lifeline" pipe whose
//     write end only flower holds (closed by the kernel however flower
//     dies, and by Close);
//   - starts each command flower asks for (serve_linux.go) in a PID and
//     mount namespace of its own, nested in the run's, whose init is a
//     fork of the helper that never execs: it mounts that namespace's
//     /proc, so the command sees its own processes only, and exits when
//     the command exits, with its status; the kernel then kills whatever
//     the command left, setsid, double-forked, nohup'd and disowned
//     processes included. Ending a call early kills that init;
//   - applies Landlock to each command before it execs: read everywhere,
//     write only the workspace, the run's TMPDIR and Config.Writable; no
//     TCP connect or bind unless Config.Network; no ptrace (so no
//     /proc/<pid>/environ) of, and no signal to, processes outside the
//     sandbox.
//
// Where namespaces cannot be created (user namespaces disabled), each
// command gets a helper of its own (Wrap), a child subreaper: orphans are
// re-parented to it, and when the command ends (or flower dies) it kills
// every descendant it can find. A process that double-forks between two
// scans can escape; that is the residual risk of that fallback. Elsewhere
// than Linux there is no helper (see Supported).
//
// Harden keeps flower's own secrets from processes of the same user; it
// lives here because it must be ordered with the helper's start.
//
// Landlock must apply to the tool's process and never to flower itself
// or the helper, which is why it is applied in the command's process,
// between fork and exec.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Mode says how much the sandbox is wanted (flower.yaml sandbox.mode).
type Mode string

const (
	// Auto applies Landlock where the kernel has it and says so in one line
	// where it does not.
	Auto Mode = "auto"
	// Required refuses to start without Landlock.
	Required Mode = "required"
	// Off applies no Landlock. Processes still die with their call and
	// with flower.
	Off Mode = "off"
)

// Valid reports whether m is one of the three modes ("" counts as Auto).
func (m Mode) Valid() bool {
	return m == "" || m == Auto || m == Required || m == Off
}

// Config is what a sandbox allows.
type Config struct {
	Mode Mode
	// Workspace is the directory tools work in: always writable.
	Workspace string
	// Writable are more directories (or files) the tools may write,
	// absolute. A missing one is skipped.
	Writable []string
	// Network allows TCP. False denies TCP connect and bind (Landlock ABI 4,
	// Linux 6.7), and UDP too from ABI 10.
	Network bool
	// TempParent is where the run's TMPDIR is created; "" is os.TempDir().
	TempParent string
}

// Sandbox is a configured sandbox with its run's TMPDIR. A nil *Sandbox is
// usable: its processes still run under the helper (they die with their
// call and with flower) but without Landlock.
type Sandbox struct {
	cfg      Config
	tmp      string
	landlock int     // the Landlock ABI applied; 0: none
	note     string  // what is not contained, in one line; "" when all is
	run      *runner // the run's helper, started by the first Start; shared by Widen's copies
}

// ErrUnavailable is returned by New in Required mode without Landlock.
var ErrUnavailable = errors.New("sandbox: Landlock is not available")

// New checks what the kernel offers and creates the run's TMPDIR. In
// Required mode a kernel without Landlock (or without the network
// restriction when Network is false) is an error wrapping ErrUnavailable.
func New(cfg Config) (*Sandbox, error) {
	if !cfg.Mode.Valid() {
		return nil, fmt.Errorf("sandbox: unknown mode %q (use auto, required or off)", cfg.Mode)
	}
	if cfg.Mode == "" {
		cfg.Mode = Auto
	}
	abs, err := filepath.Abs(cfg.Workspace)
	if err != nil {
		return nil, fmt.Errorf("sandbox: workspace: %w", err)
	}
	cfg.Workspace = abs
	s := &Sandbox{cfg: cfg, run: newRunner()}
	if err := s.probe(); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(cfg.TempParent, "flower-tmp-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: temp dir: %w", err)
	}
	s.tmp = tmp
	return s, nil
}

// probe decides what will be applied and the note that says what won't.
func (s *Sandbox) probe() error {
	var notes []string
	abi := landlockABI()
	switch {
	case s.cfg.Mode == Off:
		notes = append(notes, "sandbox off (flower.yaml sandbox.mode): tool processes may write anywhere flower can")
	case abi == 0 && s.cfg.Mode == Required:
		return fmt.Errorf("%w on this system (%s), and flower.yaml sets sandbox.mode: required", ErrUnavailable, platform())
	case abi == 0:
		notes = append(notes, fmt.Sprintf("no Landlock on this system (%s): tool processes may write anywhere flower can (sandbox.mode: required refuses to run)", platform()))
	case !s.cfg.Network && abi < 4 && s.cfg.Mode == Required:
		return fmt.Errorf("%w for TCP on this kernel (Landlock ABI %d, needs 4) and flower.yaml sets sandbox.network: false with mode: required", ErrUnavailable, abi)
	case !s.cfg.Network && abi < 4:
		notes = append(notes, fmt.Sprintf("Landlock ABI %d cannot deny TCP (needs 4): sandbox.network: false is not enforced", abi))
	}
	if s.cfg.Mode != Off {
		s.landlock = abi
	}
	s.note = strings.Join(notes, "; ")
	return nil
}

// NamespaceNote is one line saying that processes are not in namespaces
// of their own here, or "". It waits for the probe (Probe), which New
// does not: the probe starts a process, and need not delay what a caller
// does before its first command (issue 19).
func NamespaceNote() string { return namespaceNote() }

// Note is one line saying what the sandbox does not contain here (its
// mode and Landlock; NamespaceNote says the rest), or "".
func (s *Sandbox) Note() string {
	if s == nil {
		return ""
	}
	return s.note
}

// TempDir is the run's TMPDIR: writable by tool processes, removed by Close.
func (s *Sandbox) TempDir() string {
	if s == nil {
		return ""
	}
	return s.tmp
}

// Landlock is the Landlock ABI version applied to tool processes, 0 for none.
func (s *Sandbox) Landlock() int {
	if s == nil {
		return 0
	}
	return s.landlock
}

// Writable lists the paths tool processes may write: the workspace, the
// TMPDIR and Config.Writable. Nil when nothing is restricted.
func (s *Sandbox) Writable() []string {
	if s == nil || s.landlock == 0 {
		return nil
	}
	return slices.Concat([]string{s.cfg.Workspace, s.tmp}, s.cfg.Writable)
}

// Network reports whether tool processes may use TCP.
func (s *Sandbox) Network() bool {
	return s == nil || s.cfg.Network || s.landlock < 4
}

// Close ends the run's helper, and with it every process started in the
// sandbox, and removes the TMPDIR and what the tools left in it.
func (s *Sandbox) Close() error {
	if s == nil {
		return nil
	}
	if s.run != nil {
		s.run.close()
	}
	if s.tmp == "" {
		return nil
	}
	return os.RemoveAll(s.tmp)
}

// Summary describes the sandbox for the model, in one sentence, or "".
// It names $TMPDIR, not its path: the path is new in every process, and
// the tools' descriptions open every request, so a path in them would
// change the prompt's cached prefix at every wake (issue 12).
func (s *Sandbox) Summary() string {
	w := s.Writable()
	if w == nil {
		return ""
	}
	net := "Network access is allowed."
	if !s.Network() {
		net = "Network access (TCP) is denied."
	}
	for i, p := range w {
		if p == s.tmp {
			w[i] = "$TMPDIR"
		}
	}
	tmp := "$TMPDIR is private to this run and emptied when it ends"
	if !slices.Contains(w, "/tmp") {
		tmp += "; /tmp is not writable, use $TMPDIR"
	}
	return fmt.Sprintf("Commands run in a sandbox: they can read any file but write only under %s (%s). %s",
		strings.Join(w, ", "), tmp, net)
}

// Widen returns a sandbox like s whose processes may also write paths
// (absolute), sharing s's TMPDIR and helper: for a kind of process that needs more
// than Bash does (npx's cache for MCP servers). Close s, not the copy.
func (s *Sandbox) Widen(paths ...string) *Sandbox {
	if s == nil {
		return nil
	}
	w := *s
	w.cfg.Writable = slices.Concat(s.cfg.Writable, paths)
	return &w
}
