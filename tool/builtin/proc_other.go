//go:build !unix

package builtin

import (
	"os"
	"os/exec"

	"github.com/flower-run/flower/sandbox"
)

// Without Unix process groups, Bash runs the shell directly and a timeout
// kills the shell alone.

func shellArgs(_, command string) []string { return []string{"-c", command} }

func start(cmd *exec.Cmd, _ *sandbox.Sandbox) (proc, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return plainProc{cmd}, nil
}

type plainProc struct{ cmd *exec.Cmd }

func (p plainProc) wait() error { return p.cmd.Wait() }
func (p plainProc) kill()       { _ = killProcess(p.cmd.Process) }

func killProcess(p *os.Process) error {
	if p == nil {
		return nil
	}
	if err := p.Kill(); err != nil && err != os.ErrProcessDone {
		return err
	}
	return nil
}
