//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
	"runtime"
)

// InitEnv is the variable that turns the program into the helper (Linux only).
const InitEnv = "FLOWER_SANDBOX_INIT"

// Supported reports whether processes run under the helper here: not on
// this system, where tools keep their own process-group handling.
const Supported = false

// Guard holds flower's end of a helper's lifeline (Linux only).
type Guard struct{}

func (*Guard) Started() {}
func (*Guard) End()     {}

// Wrap is unsupported here: there is no helper.
func (s *Sandbox) Wrap(*exec.Cmd) (*Guard, error) { return nil, errors.ErrUnsupported }

// Process is a command started in a sandbox (Linux only).
type Process struct{}

// Start is unsupported here: there is no helper.
func (s *Sandbox) Start(*Cmd) (*Process, error) { return nil, errors.ErrUnsupported }

// Wait does nothing here.
func (*Process) Wait() error { return errors.ErrUnsupported }

// Kill does nothing here.
func (*Process) Kill() {}

// Harden does nothing where there is no /proc/<pid>/environ to hide and
// no dumpable flag; the scrubbing of tool results still holds.
func Harden([]string) error { return nil }

type runner struct{}

func newRunner() *runner { return nil }
func (*runner) close()   {}

func (*runner) view([]string, []string, bool) {}

func netNamespaces() bool { return false }

// Prestart does nothing here: there is no helper.
func (*Sandbox) Prestart() {}

// Probe does nothing here.
func Probe() {}

func landlockABI() int      { return 0 }
func platform() string      { return runtime.GOOS }
func namespaceNote() string { return "" }
