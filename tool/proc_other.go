//go:build !unix

package tool

import (
	"os"
	"os/exec"
	"syscall"
)

// Without Unix process groups, Bash runs the shell directly and a timeout
// kills the shell alone.

func shellArgs(_, command string) []string { return []string{"-c", command} }

func attachLifeline(*exec.Cmd, *os.File) {}

func sysProcAttr() *syscall.SysProcAttr { return nil }

func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	if err := p.Kill(); err != nil && err != os.ErrProcessDone {
		return err
	}
	return nil
}
