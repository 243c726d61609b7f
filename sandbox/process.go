package sandbox

import (
	"os"
	"strconv"
)

// Cmd is a command to start in a sandbox (Sandbox.Start): what an
// exec.Cmd says about a process, without the process.
type Cmd struct {
	Path string   // the program, as exec.LookPath found it
	Args []string // argv, with Args[0] the name
	Env  []string // the whole environment; TMPDIR is set to the run's
	Dir  string   // working directory; "" is the caller's
	// Stdin, Stdout and Stderr are passed to the command as they are; nil
	// is /dev/null.
	Stdin, Stdout, Stderr *os.File
}

// ExitError is the status of a command that did not exit with 0: its
// exit code, or 128+n when signal n killed it (as a shell says it).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return "exit status " + strconv.Itoa(e.Code) }

// ExitCode is the command's status.
func (e *ExitError) ExitCode() int { return e.Code }
