//go:build unix

package mcpserver

import (
	"os"
	"syscall"
)

// canDetach: a task runs in a process of its own that outlives the
// client's session.
const canDetach = true

// detached puts a task's process in a session of its own: the client's
// signals to its server's process group (Ctrl-C, SIGHUP of a closing
// terminal) do not reach it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// ReadyFile is where a task's own process says the task started: the
// launcher's pipe, fd 3.
func ReadyFile() *os.File { return os.NewFile(3, "ready") }
