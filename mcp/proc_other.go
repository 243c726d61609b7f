//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

// wrap runs the server directly: without process groups a server may
// outlive a flower that is killed.
func wrap(command string, args []string, _ *os.File) *exec.Cmd {
	return exec.Command(command, args...)
}

func killGroup(p *os.Process) {
	if p != nil {
		_ = p.Kill()
	}
}
