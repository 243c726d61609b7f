package hook

import (
	"bytes"
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
)

// DefaultTimeout bounds a hook that sets no timeout, as in Claude Code.
const DefaultTimeout = 60 * time.Second

// Input is what a hook reads on stdin: the common fields, then those of
// its event (empty ones are left out).
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	Event          Event  `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode,omitempty"`

	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	ToolResponse any             `json:"tool_response,omitempty"`

	Prompt         string `json:"prompt,omitempty"`           // UserPromptSubmit
	StopHookActive *bool  `json:"stop_hook_active,omitempty"` // Stop, SubagentStop
	Source         string `json:"source,omitempty"`           // SessionStart: startup, resume
	Trigger        string `json:"trigger,omitempty"`          // PreCompact: auto
	Message        string `json:"message,omitempty"`          // Notification
	Reason         string `json:"reason,omitempty"`           // SessionEnd
}

// Outcome is what the hooks of one event decided, together.
type Outcome struct {
	// Ran is how many hooks ran.
	Ran int
	// Block is true when a hook exited 2 or said "block" (or, for
	// PreToolUse, "deny"): the call, prompt or stop does not go ahead.
	// Reason is then for the model (stderr, or the JSON reason).
	Block  bool
	Reason string
	// Permission is PreToolUse's permissionDecision: "allow", "deny",
	// "ask" or "" (none said). deny outranks ask, ask outranks allow.
	Permission string
	// Stop is true when a hook said "continue": false: the run stops,
	// with StopReason for the person.
	Stop       bool
	StopReason string
	// Context is added for the model: additionalContext, and the plain
	// stdout of UserPromptSubmit and SessionStart hooks.
	Context string
	// Notes are for the person: non-blocking errors and systemMessage.
	Notes []string
}

// Runner runs the hooks of a project.
type Runner struct {
	Config Config
	// Dir is the project directory: the hooks' working directory and
	// $CLAUDE_PROJECT_DIR.
	Dir string
	// Sandbox contains the hooks' processes as it does Bash's; nil runs
	// them under the process's shared helper (Linux) or directly.
	Sandbox *sandbox.Sandbox
	// Env is the environment hooks get (Bash's); nil is this process's.
	Env func() []string
}

// Has reports whether any hook would run for ev and name: a caller skips
// the work of building the input (and of recording a decision) when none
// would.
func (r *Runner) Has(ev Event, name string) bool {
	if r == nil {
		return false
	}
	for _, g := range r.Config[ev] {
		if g.Matches(name) {
			return true
		}
	}
	return false
}

// Run runs the hooks of in.Event whose matcher matches name, in order,
// and folds their outcomes. A hook that cannot start, times out or exits
// with a code other than 0 and 2 is a note, not a block: a broken hook
// never stops the work (Claude Code's rule). A hook that blocks or stops
// ends the list.
func (r *Runner) Run(ctx context.Context, in Input, name string) Outcome {
	var out Outcome
	if r == nil {
		return out
	}
	in.Cwd = orDefault(in.Cwd, r.Dir)
	stdin, err := json.Marshal(in)
	if err != nil {
		out.Notes = append(out.Notes, fmt.Sprintf("hook %s: input: %v", in.Event, err))
		return out
	}
	seen := map[string]bool{} // identical commands run once, as in Claude Code
	for _, g := range r.Config[in.Event] {
		if !g.Matches(name) {
			continue
		}
		for _, h := range g.Hooks {
			if seen[h.Command] {
				continue
			}
			seen[h.Command] = true
			out.Ran++
			res := r.run(ctx, h, stdin)
			fold(&out, in.Event, h, res)
			if out.Block || out.Stop {
				return out
			}
		}
	}
	return out
}

// result is one hook's run.
type result struct {
	code           int // -1: did not start or timed out
	stdout, stderr string
	err            error
}

func (r *Runner) run(ctx context.Context, h Command, stdin []byte) result {
	timeout := DefaultTimeout
	if h.Timeout > 0 {
		timeout = time.Duration(h.Timeout * float64(time.Second))
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	env := os.Environ()
	if r.Env != nil {
		env = r.Env()
	}
	env = append(env, "CLAUDE_PROJECT_DIR="+r.Dir)
	res := r.start(ctx, h.Command, env, stdin)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.code, res.err = -1, fmt.Errorf("timed out after %v and was killed", timeout)
	}
	return res
}

// start runs command with stdin, collecting stdout and stderr.
func (r *Runner) start(ctx context.Context, command string, env []string, stdin []byte) result {
	shell, err := exec.LookPath("bash")
	if err != nil {
		if shell, err = exec.LookPath("sh"); err != nil {
			return result{code: -1, err: err}
		}
	}
	if !sandbox.Supported {
		return direct(ctx, shell, command, r.Dir, env, stdin)
	}
	files, err := newPipes()
	if err != nil {
		return result{code: -1, err: err}
	}
	defer files.close()
	p, err := r.Sandbox.Start(&sandbox.Cmd{Path: shell, Args: []string{shell, "-c", command}, Env: env, Dir: r.Dir,
		Stdin: files.inR, Stdout: files.outW, Stderr: files.errW})
	files.closeChildEnds()
	if err != nil {
		return result{code: -1, err: err}
	}
	defer context.AfterFunc(ctx, p.Kill)()
	go func() {
		_, _ = files.inW.Write(stdin) // a hook that reads nothing closes the pipe: fine
		_ = files.inW.Close()
	}()
	stdout, stderr := files.collect()
	werr := p.Wait()
	res := result{stdout: <-stdout, stderr: <-stderr}
	var ee *sandbox.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &ee):
		res.code = ee.Code
	default:
		res.code, res.err = -1, werr
	}
	return res
}

// direct runs the hook without the sandbox helper (not Linux).
func direct(ctx context.Context, shell, command, dir string, env []string, stdin []byte) result {
	cmd := exec.CommandContext(ctx, shell, "-c", command)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, bytes.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	res := result{stdout: o.String(), stderr: e.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		res.code, res.err = -1, err
	}
	return res
}

// pipes are a hook's three standard streams.
type pipes struct {
	inR, inW, outR, outW, errR, errW *os.File
}

func newPipes() (*pipes, error) {
	var p pipes
	var err error
	if p.inR, p.inW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if p.outR, p.outW, err = os.Pipe(); err != nil {
		p.close()
		return nil, err
	}
	if p.errR, p.errW, err = os.Pipe(); err != nil {
		p.close()
		return nil, err
	}
	return &p, nil
}

// closeChildEnds closes this process's copies of the child's ends, so
// that the readers see the end when the hook (and all it started) exits.
func (p *pipes) closeChildEnds() {
	for _, f := range []*os.File{p.inR, p.outW, p.errW} {
		_ = f.Close()
	}
}

func (p *pipes) close() {
	for _, f := range []*os.File{p.inR, p.inW, p.outR, p.outW, p.errR, p.errW} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// maxOutput bounds what is kept of a hook's stdout or stderr.
const maxOutput = 1 << 20

func (p *pipes) collect() (stdout, stderr <-chan string) {
	read := func(f *os.File) <-chan string {
		ch := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(io.LimitReader(f, maxOutput))
			_, _ = io.Copy(io.Discard, f)
			ch <- string(b)
		}()
		return ch
	}
	return read(p.outR), read(p.errR)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func short(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
