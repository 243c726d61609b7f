package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/flower-run/flower/sandbox"
	"github.com/flower-run/flower/tool"
)

const (
	// killGrace is how long Wait may take after the process group was
	// killed before exec gives up on it (cmd.WaitDelay).
	killGrace = 5 * time.Second
	// drainGrace is how long output is still read after the shell exited
	// and its group was killed; only a process that left the group (setsid)
	// can hold the pipe that long, and it is not waited for.
	drainGrace = 500 * time.Millisecond
)

// Bash runs a shell command in the workspace.
type Bash struct{ Env Env }

var _ tool.Tool = (*Bash)(nil)

func (*Bash) Name() string      { return "Bash" }
func (*Bash) Class() tool.Class { return tool.Effect }

func (t *Bash) Description() string {
	env := t.Env.withDefaults()
	return fmt.Sprintf(`Runs a shell command with bash -c (sh when bash is missing) in the workspace directory and returns its combined stdout and stderr.

- Each call starts a fresh shell in the workspace: cd, shell variables and aliases do not carry over to the next call. Chain dependent commands in one call with &&.
- timeout is in milliseconds: default %d, at most %d. On timeout the command and every process it started are killed, and the output so far is returned.
- A non-zero exit status makes the result an error carrying the exit code and the output.
- Output over %d bytes is cut in the middle, keeping the beginning and the end.
- Stdin is empty, so interactive programs (editors, pagers, prompts) cannot work: pass flags such as -y, use git --no-pager.
- Processes still running when the command returns are killed, setsid ones too. To keep a server or a long build running, set run_in_background: the call returns at once with a shell id; read its output with BashOutput and stop it with KillShell. Background shells stop when this step ends.
- Quote paths that contain spaces.
- Prefer the dedicated tools: Read over cat, head and tail; Edit and Write over sed, awk or echo redirection; Glob over find and ls; Grep over grep and rg.%s`,
		env.BashTimeout.Milliseconds(), env.BashMaxTimeout.Milliseconds(), env.OutputCap, sandboxLine(env.Sandbox))
}

// sandboxLine tells the model what the sandbox allows, so that it does not
// take a refused write for a bug.
func sandboxLine(sb *sandbox.Sandbox) string {
	if s := sb.Summary(); s != "" {
		return "\n- " + s
	}
	return ""
}

func (t *Bash) Schema() json.RawMessage {
	env := t.Env.withDefaults()
	return json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The shell command to run."},
    "timeout": {"type": "integer", "minimum": 1, "maximum": %d, "description": "Timeout in milliseconds (default %d, at most %d)."},
    "run_in_background": {"type": "boolean", "description": "Run the command in the background and return at once with a shell id (for servers and long builds)."}
  },
  "required": ["command"]
}`, env.BashMaxTimeout.Milliseconds(), env.BashTimeout.Milliseconds(), env.BashMaxTimeout.Milliseconds()))
}

type bashInput struct {
	Command    string  `json:"command"`
	Timeout    flexInt `json:"timeout"`
	Background bool    `json:"run_in_background"`
}

func (t *Bash) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	env := t.Env.withDefaults()
	var in bashInput
	if err := decodeInput(input, &in, "command"); err != nil {
		return tool.Errorf("Bash: %v", err), nil
	}
	if strings.TrimSpace(in.Command) == "" {
		return tool.Errorf("Bash: command is empty"), nil
	}
	if in.Background {
		return background(ctx, env, in.Command)
	}
	return runShell(ctx, env, in.Command, in.timeout(env))
}

// background starts command as a background shell named by the call's id.
func background(ctx context.Context, env Env, command string) (tool.Result, error) {
	if env.Shells == nil {
		return tool.Errorf("Bash: run_in_background is not available here; run the command in the foreground."), nil
	}
	id := tool.CallID(ctx)
	if id == "" {
		id = fmt.Sprintf("shell-%d", time.Now().UnixNano())
	}
	if err := env.Shells.start(env, id, command); err != nil {
		return tool.Errorf("Bash: start in the background: %v", err), nil
	}
	return tool.Result{Content: fmt.Sprintf("Started in the background as shell %s. Read its output with BashOutput (bash_id %q) and stop it with KillShell (shell_id %q). It stops when this step ends, and when flower stops.", id, id, id)}, nil
}

// timeout is the asked-for timeout, clamped to the configured maximum
// rather than refused: a model asking for too much still gets the most.
func (in bashInput) timeout(env Env) time.Duration {
	if in.Timeout <= 0 {
		return env.BashTimeout
	}
	return min(time.Duration(in.Timeout)*time.Millisecond, env.BashMaxTimeout)
}

// runShell runs command contained (see contain) and reports the outcome.
func runShell(ctx context.Context, env Env, command string, timeout time.Duration) (tool.Result, error) {
	shell, err := findShell()
	if err != nil {
		return tool.Errorf("Bash: %v", err), nil
	}
	sandbox.Probe() // once per process: not part of the command's time
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command(shell, shellArgs(shell, command)...)
	cmd.Dir = env.Workspace
	cmd.Env = env.environ()
	cmd.WaitDelay = killGrace
	out := tool.NewCapWriter(env.OutputCap)
	waitErr, err := startAndWait(tctx, cmd, env.Sandbox, out)
	if err != nil {
		return tool.Errorf("Bash: start %s: %v", shell, err), nil
	}
	return outcome(ctx, tctx, waitErr, timeout, out.String())
}

// findShell prefers bash, which models write for, and falls back to sh.
func findShell() (string, error) {
	for _, name := range []string{"bash", "sh"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("neither bash nor sh found in PATH")
}

// proc is a command started contained (start, one per platform).
type proc interface {
	// wait returns when the command exited, with nil or an error with an
	// ExitCode method; its leftovers are then dead.
	wait() error
	// kill ends the command and everything it started; wait then returns.
	kill()
}

// startAndWait runs cmd contained, with its stdout and stderr on one pipe
// copied into out, until it exits or ctx is done (then it is killed). The
// pipe is ours rather than exec's so that the wait returns as soon as the
// command exits; its leftovers are killed by then, which closes the pipe
// they hold, and the output is drained.
func startAndWait(ctx context.Context, cmd *exec.Cmd, sb *sandbox.Sandbox, out io.Writer) (waitErr, startErr error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("output pipe: %w", err)
	}
	defer r.Close()
	cmd.Stdout, cmd.Stderr = w, w
	watch := sb.WatchProtected()
	p, err := start(cmd, sb)
	w.Close() // the child holds its own copies
	if err != nil {
		return nil, err
	}
	defer context.AfterFunc(ctx, p.kill)()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, r) // a read error just ends the output
	}()
	waitErr = p.wait()
	_ = r.SetReadDeadline(time.Now().Add(drainGrace))
	<-copied
	if note := watch.Undo(); note != "" {
		_, _ = io.WriteString(out, "\n"+note+"\n")
	}
	return waitErr, nil
}

// outcome turns the end of a command into a Result. A cancelled parent
// context is a runtime failure (the run is being interrupted), so it is
// a Go error; a timeout is the model's to see.
func outcome(ctx, tctx context.Context, waitErr error, timeout time.Duration, output string) (tool.Result, error) {
	var exitErr interface{ ExitCode() int }
	switch {
	case waitErr == nil:
		return tool.Result{Content: orDefault(output, "(no output)")}, nil
	case ctx.Err() != nil:
		return tool.Result{Content: output, IsError: true}, fmt.Errorf("bash: %w", ctx.Err())
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		return tool.Errorf("Command timed out after %v; it and every process it started were killed.\n%s", timeout, output), nil
	case errors.As(waitErr, &exitErr) && exitErr.ExitCode() >= 0:
		return tool.Errorf("Exit code %d\n%s", exitErr.ExitCode(), output), nil
	}
	return tool.Errorf("Command failed: %v\n%s", waitErr, output), nil
}
