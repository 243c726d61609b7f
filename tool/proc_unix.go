//go:build unix && !linux

package tool

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"github.com/flower-run/flower/sandbox"
)

// watchScript runs a command so that its whole process group dies with
// flower, however flower dies. Fd 3 is the read end of a "lifeline" pipe
// whose write end only flower holds. A watcher in the group blocks reading
// it; when flower exits, even by SIGKILL, the kernel closes the write end,
// the read returns, and the watcher kills the group, grandchildren
// included. The command itself is exec'd in the foreground, so its exit
// status, signals and stdin are untouched (a background job of sh would
// start with SIGINT ignored), and it does not inherit the lifeline.
//
// A process that leaves the group (setsid) escapes: without Linux's PID
// namespaces and subreapers, that is the residual risk here.
const watchScript = `{ read -r line <&3; kill -s KILL 0; } </dev/null >/dev/null 2>&1 &
exec "$0" -c "$1" 3<&-`

// shellArgs runs command under watchScript: $0 is the shell, $1 the command.
func shellArgs(shell, command string) []string {
	return []string{"-c", watchScript, shell, command}
}

// contain puts cmd in a process group of its own with the lifeline as fd
// 3; killing the group ends the call. There is no Landlock here.
func contain(cmd *exec.Cmd, _ *sandbox.Sandbox) (containment, error) {
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return containment{}, err
	}
	cmd.ExtraFiles = []*os.File{lifeR}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	// Leftovers die after Wait. The group id cannot have been reused:
	// watchScript's watcher is still in the group, keeping it alive.
	return containment{started: func() { _ = lifeR.Close() }, end: func() { _ = lifeW.Close() },
		afterWait: func() { _ = killGroup(cmd.Process) }}, nil
}

// killGroup SIGKILLs the process group led by p. A group already gone is
// not an error.
func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
