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

// Probe does nothing here.
func Probe() {}

func landlockABI() int      { return 0 }
func platform() string      { return runtime.GOOS }
func namespaceNote() string { return "" }
