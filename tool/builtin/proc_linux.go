package builtin

import (
	"os"
	"os/exec"

	"github.com/flower-run/flower/sandbox"
)

// shellArgs runs command directly: the sandbox helper does the containing.
func shellArgs(_, command string) []string { return []string{"-c", command} }

// start starts cmd (a description: Path, Args, Dir, Env, and *os.File
// stdio) in sb (package sandbox): in a PID namespace of its own, started
// by the run's helper, under Landlock when sb applies it. When the command
// exits, when it is killed, and when flower dies, everything it started
// dies with it; so when wait returns, nothing of the call is left.
func start(cmd *exec.Cmd, sb *sandbox.Sandbox) (proc, error) {
	in, _ := cmd.Stdin.(*os.File)
	out, _ := cmd.Stdout.(*os.File)
	errOut, _ := cmd.Stderr.(*os.File)
	p, err := sb.Start(&sandbox.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir,
		Stdin: in, Stdout: out, Stderr: errOut})
	if err != nil {
		return nil, err
	}
	return sandboxProc{p}, nil
}

type sandboxProc struct{ p *sandbox.Process }

func (s sandboxProc) wait() error { return s.p.Wait() }
func (s sandboxProc) kill()       { s.p.Kill() }
