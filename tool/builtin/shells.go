package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flower-run/flower/sandbox"
	"github.com/flower-run/flower/tool"
)

// Shells are the commands Bash started with run_in_background. They run
// until KillShell stops them, the step ends (Shells.StopAll, called by the
// runtime) or flower ends, whichever is first; they are contained like
// any Bash command (their processes die with flower).
type Shells struct {
	mu   sync.Mutex // guards byID
	byID map[string]*shell
}

// NewShells returns an empty set of background shells.
func NewShells() *Shells { return &Shells{byID: map[string]*shell{}} }

// shell is one background command.
type shell struct {
	id, command string
	p           proc
	watch       sandbox.Watch // the protected paths it may create, undone when it ends
	out         *unread
	done        chan struct{} // closed when the command ended and its output is drained
	err         error         // Wait's error, once done
	killed      bool          // KillShell or StopAll ended it; guarded by Shells.mu
}

// start runs command in the background as shell id (the call's id, so
// that it is unique across restarts).
func (s *Shells) start(env Env, id, command string) error {
	shellPath, err := findShell()
	if err != nil {
		return err
	}
	// Not tied to the call's context: the shell outlives the call.
	cmd := exec.Command(shellPath, shellArgs(shellPath, command)...)
	cmd.Dir, cmd.Env = env.Workspace, env.environ()
	cmd.WaitDelay = killGrace
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("output pipe: %w", err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	watch := env.Sandbox.WatchProtected()
	p, err := start(cmd, env.Sandbox)
	w.Close() // the child holds its own copies
	if err != nil {
		r.Close()
		return err
	}
	sh := &shell{id: id, command: command, p: p, watch: watch, out: &unread{limit: env.OutputCap}, done: make(chan struct{})}
	go sh.run(r)
	s.mu.Lock()
	s.byID[id] = sh
	s.mu.Unlock()
	return nil
}

// run copies the command's output until it ended, then records how.
func (sh *shell) run(r *os.File) {
	defer close(sh.done)
	defer r.Close()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(sh.out, r)
	}()
	sh.err = sh.p.wait()
	_ = r.SetReadDeadline(time.Now().Add(drainGrace))
	<-copied
	if note := sh.watch.Undo(); note != "" {
		_, _ = io.WriteString(sh.out, "\n"+note+"\n")
	}
}

func (s *Shells) get(id string) (*shell, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, ok := s.byID[id]
	return sh, ok
}

// kill ends a shell and everything it started, and waits for it.
func (s *Shells) kill(sh *shell) {
	s.mu.Lock()
	sh.killed = true
	s.mu.Unlock()
	sh.p.kill()
	select {
	case <-sh.done:
	case <-time.After(killGrace): // the helper is stuck: give up waiting
	}
}

// StopAll kills every background shell still running: the step ended.
func (s *Shells) StopAll() {
	if s == nil {
		return
	}
	s.mu.Lock()
	all := make([]*shell, 0, len(s.byID))
	for _, sh := range s.byID {
		all = append(all, sh)
	}
	s.byID = map[string]*shell{}
	s.mu.Unlock()
	for _, sh := range all {
		s.kill(sh)
	}
}

// status says whether sh still runs, and how it ended.
func (s *Shells) status(sh *shell) string {
	select {
	case <-sh.done:
	default:
		return "running"
	}
	s.mu.Lock()
	killed := sh.killed
	s.mu.Unlock()
	if killed {
		return "killed"
	}
	if sh.err == nil {
		return "exited with code 0"
	}
	if ee, ok := sh.err.(interface{ ExitCode() int }); ok && ee.ExitCode() >= 0 {
		return fmt.Sprintf("exited with code %d", ee.ExitCode())
	}
	return "failed: " + sh.err.Error()
}

// ids lists the shells, for messages.
func (s *Shells) ids() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.byID))
	for id := range s.byID {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// unread holds output not yet read by BashOutput, keeping the newest
// limit bytes and counting what it dropped.
type unread struct {
	mu      sync.Mutex // guards the fields below
	limit   int
	buf     []byte
	dropped int64
}

func (u *unread) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.buf = append(u.buf, p...)
	if over := len(u.buf) - max(u.limit, 1); over > 0 {
		u.dropped += int64(over)
		u.buf = append(u.buf[:0], u.buf[over:]...)
	}
	return len(p), nil
}

// take returns the unread output and forgets it.
func (u *unread) take() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := strings.ToValidUTF8(string(u.buf), "\uFFFD")
	if u.dropped > 0 {
		s = fmt.Sprintf("… %d earlier bytes dropped …\n", u.dropped) + s
	}
	u.buf, u.dropped = nil, 0
	return s
}

// BashOutput reads what a background shell printed since the last read.
type BashOutput struct{ Env Env }

func (*BashOutput) Name() string { return "BashOutput" }

// Class is World: it reads something outside the store, and after a
// restart the shell is gone, so the call must run again, not be replayed.
func (*BashOutput) Class() tool.Class { return tool.World }

func (*BashOutput) Description() string {
	return `Returns what a background shell (started by Bash with run_in_background) printed since the last BashOutput call for it, and whether it still runs.

- bash_id is the id Bash returned.
- filter, a regular expression, keeps only the matching lines; the others are read and dropped.
- Background shells end when the step ends and when flower restarts.`
}

func (*BashOutput) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "bash_id": {"type": "string", "description": "The id of the background shell."},
    "filter": {"type": "string", "description": "Optional regular expression: only matching lines are returned."}
  },
  "required": ["bash_id"]
}`)
}

func (t *BashOutput) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	var in struct {
		ID     string `json:"bash_id"`
		Filter string `json:"filter"`
	}
	if err := decodeInput(input, &in, "bash_id"); err != nil {
		return tool.Errorf("BashOutput: %v", err), nil
	}
	sh, res, ok := lookup(t.Env.Shells, in.ID)
	if !ok {
		return res, nil
	}
	var re *regexp.Regexp
	if in.Filter != "" {
		var err error
		if re, err = regexp.Compile(in.Filter); err != nil {
			return tool.Errorf("BashOutput: filter: %v", err), nil
		}
	}
	status := t.Env.Shells.status(sh)
	out := sh.out.take()
	if re != nil {
		var kept []string
		for _, l := range strings.Split(out, "\n") {
			if re.MatchString(l) {
				kept = append(kept, l)
			}
		}
		out = strings.Join(kept, "\n")
	}
	return tool.Result{Content: fmt.Sprintf("Status: %s\n\n%s", status, orDefault(out, "(no new output)"))}, nil
}

// lookup finds a shell, or the error result that says it does not exist.
func lookup(s *Shells, id string) (*shell, tool.Result, bool) {
	if s == nil {
		return nil, tool.Errorf("No background shells here."), false
	}
	sh, ok := s.get(id)
	if !ok {
		return nil, tool.Errorf("No background shell %q: it ended with its step, or flower restarted since it started (shells then end). Running: %v.", id, s.ids()), false
	}
	return sh, tool.Result{}, true
}

// KillShell stops a background shell and everything it started.
type KillShell struct{ Env Env }

func (*KillShell) Name() string      { return "KillShell" }
func (*KillShell) Class() tool.Class { return tool.Effect }

func (*KillShell) Description() string {
	return "Stops a background shell started by Bash with run_in_background, and every process it started. shell_id is the id Bash returned."
}

func (*KillShell) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {"shell_id": {"type": "string", "description": "The id of the background shell to stop."}},
  "required": ["shell_id"]
}`)
}

func (t *KillShell) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	var in struct {
		ID string `json:"shell_id"`
	}
	if err := decodeInput(input, &in, "shell_id"); err != nil {
		return tool.Errorf("KillShell: %v", err), nil
	}
	sh, res, ok := lookup(t.Env.Shells, in.ID)
	if !ok {
		return res, nil
	}
	t.Env.Shells.kill(sh)
	return tool.Result{Content: fmt.Sprintf("Shell %s stopped. Its last output:\n%s", in.ID, orDefault(sh.out.take(), "(none)"))}, nil
}
