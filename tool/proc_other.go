//go:build !unix

package tool

import (
	"os"
	"os/exec"

	"github.com/flower-run/flower/sandbox"
)

// Without Unix process groups, Bash runs the shell directly and a timeout
// kills the shell alone.

func shellArgs(_, command string) []string { return []string{"-c", command} }

func contain(cmd *exec.Cmd, _ *sandbox.Sandbox) (containment, error) {
	cmd.Cancel = func() error { return killProcess(cmd.Process) }
	return containment{started: func() {}, end: func() {}, afterWait: func() {}}, nil
}

func killProcess(p *os.Process) error {
	if p == nil {
		return nil
	}
	if err := p.Kill(); err != nil && err != os.ErrProcessDone {
		return err
	}
	return nil
}
