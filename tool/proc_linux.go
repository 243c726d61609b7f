package tool

import (
	"os/exec"

	"github.com/flower-run/flower/sandbox"
)

// shellArgs runs command directly: the sandbox helper does the containing.
func shellArgs(_, command string) []string { return []string{"-c", command} }

// contain runs cmd under the sandbox helper (package sandbox): in a PID
// namespace of its own whose init dies with flower, under Landlock when
// sb applies it. Cancelling closes the lifeline, and the helper kills
// everything the command started before it exits; so when Wait returns,
// nothing of the call is left (afterWait has nothing to do).
func contain(cmd *exec.Cmd, sb *sandbox.Sandbox) (containment, error) {
	g, err := sb.Wrap(cmd)
	if err != nil {
		return containment{}, err
	}
	cmd.Cancel = func() error { g.End(); return nil }
	return containment{started: g.Started, end: g.End, afterWait: func() {}}, nil
}
