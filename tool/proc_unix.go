//go:build unix

package tool

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
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
// The parent-death signal (Linux) covers the window before the watcher
// runs and kills the command itself even if the watcher could not start.
const watchScript = `{ read -r line <&3; kill -s KILL 0; } </dev/null >/dev/null 2>&1 &
exec "$0" -c "$1" 3<&-`

// shellArgs runs command under watchScript: $0 is the shell, $1 the command.
func shellArgs(shell, command string) []string {
	return []string{"-c", watchScript, shell, command}
}

// attachLifeline hands the lifeline's read end to the child as fd 3.
func attachLifeline(cmd *exec.Cmd, r *os.File) {
	cmd.ExtraFiles = []*os.File{r}
}

// sysProcAttr puts the shell in a process group of its own, so that one
// kill reaches everything it started and nothing of flower's.
func sysProcAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(a)
	return a
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
