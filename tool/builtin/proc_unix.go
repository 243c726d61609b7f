//go:build unix && !linux

package builtin

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

// start starts cmd in a process group of its own with the lifeline as fd
// 3; killing the group ends the call. There is no Landlock here.
func start(cmd *exec.Cmd, _ *sandbox.Sandbox) (proc, error) {
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{lifeR}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	_ = lifeR.Close()
	if err != nil {
		_ = lifeW.Close()
		return nil, err
	}
	return &groupProc{cmd: cmd, life: lifeW}, nil
}

// groupProc is a command in a process group of its own.
type groupProc struct {
	cmd  *exec.Cmd
	life *os.File // the lifeline's write end
}

// wait kills the leftovers once the command exited. The group id cannot
// have been reused: watchScript's watcher is still in the group, keeping
// it alive until the lifeline closes.
func (p *groupProc) wait() error {
	err := p.cmd.Wait()
	_ = killGroup(p.cmd.Process)
	_ = p.life.Close()
	return err
}

func (p *groupProc) kill() { _ = killGroup(p.cmd.Process) }

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
