//go:build !unix

package mcpserver

import (
	"os"
	"syscall"
)

// canDetach: on Windows a task runs in the server's process (no fd 3 to
// say it started), and stops with the client's session.
const canDetach = false

func detached() *syscall.SysProcAttr { return nil }

// ReadyFile is stdout where no fd 3 can be handed down.
func ReadyFile() *os.File { return os.Stdout }
