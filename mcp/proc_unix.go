//go:build unix

package mcp

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// lifelineScript runs a server so that its whole process group dies with
// flower, however flower dies (as Bash commands do, tool/builtin/proc_unix.go):
// fd 3 is the read end of a pipe whose write end only flower holds; a
// watcher in the group blocks reading it and kills the group when the
// kernel closes the write end. The server is exec'd with its own stdin and
// stdout (the MCP pipes) and without the lifeline. npx starts node as a
// grandchild: the group takes it too.
const lifelineScript = `{ read -r line <&3; kill -s KILL 0; } </dev/null >/dev/null 2>&1 &
exec "$@" 3<&-`

// wrap turns command and args into the exec.Cmd that runs them under the
// lifeline, in a process group of their own.
func wrap(command string, args []string, lifeline *os.File) *exec.Cmd {
	cmd := exec.Command("/bin/sh", append([]string{"-c", lifelineScript, "sh", command}, args...)...)
	cmd.ExtraFiles = []*os.File{lifeline}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
	return cmd
}

// killGroup SIGKILLs the group led by p; a group already gone is fine.
func killGroup(p *os.Process) {
	if p == nil {
		return
	}
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = p.Kill()
	}
}
