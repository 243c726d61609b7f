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
	// Hide are directories tool processes must not see at all (flower's
	// state): covered by an empty read-only tmpfs in their mount view.
	Hide []string
	// Protect are paths tool processes may read but not change, mounted
	// read-only in their view (Protected lists the workspace's).
	Protect []string
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
	s.run.view(hidden(cfg, tmp), cfg.Protect, !cfg.Network)
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
	case !s.cfg.Network && netNamespaces():
		// A network namespace of its own denies it, whatever Landlock does.
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

// Network reports whether tool processes may use TCP: they may not when
// the config says so and either a network namespace of their own (which
// has no interface but a loopback that is down) or Landlock ABI 4 denies it.
func (s *Sandbox) Network() bool {
	return s == nil || s.cfg.Network || (s.landlock < 4 && !netNamespaces())
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
	return fmt.Sprintf("Commands run in a sandbox: they can read any file but write only under %s (%s).%s %s",
		strings.Join(w, ", "), tmp, s.protectedSummary(), net)
}

// protectedSummary names the protected paths, relative to the workspace,
// in a sentence (with a leading space), or "".
func (s *Sandbox) protectedSummary() string {
	var names []string
	for _, p := range s.cfg.Protect {
		if rel, err := filepath.Rel(s.cfg.Workspace, p); err == nil && filepath.IsLocal(rel) {
			names = append(names, filepath.ToSlash(rel))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " These are read-only, for a person to change: " + strings.Join(names, ", ") + "."
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
