package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// LogFile is the file in a directory's run dir that a task's own process
// writes its output to: flower's notices, and an error that ended it.
const LogFile = "mcp-task.log"

// spec is what task_start hands a task's own process on its stdin.
type spec struct {
	Directory string `json:"directory"`
	Task      string `json:"task,omitempty"`
}

// ready is the one line a task's own process writes to the process that
// launched it once the task started, or failed to.
type ready struct {
	Status *Status `json:"status,omitempty"`
	Error  string  `json:"error,omitempty"`
}

// launch starts the task in a process of its own (Options.Command), in a
// session of its own with its output in the run dir's LogFile, and waits
// until that process has taken the directory and started the task: what
// prevents the task (another flower holds the directory, nothing to
// continue, no API key) comes back here, as it would in process.
func (s *Server) launch(ctx context.Context, dir, text string) (Status, error) {
	runDir := s.runDir(dir)
	if runDir == "" {
		return Status{}, fmt.Errorf("no run dir for %s: set XDG_STATE_HOME or HOME", dir)
	}
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return Status{}, fmt.Errorf("run dir: %w", err)
	}
	logPath := filepath.Join(runDir, LogFile)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return Status{}, fmt.Errorf("task log: %w", err)
	}
	defer logf.Close()
	in, err := json.Marshal(spec{Directory: dir, Task: text})
	if err != nil {
		return Status{}, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return Status{}, fmt.Errorf("task process: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(s.opts.Command[0], s.opts.Command[1:]...)
	// In this process's directory, so that relative paths in Command
	// mean what they meant here; the task's directory is in the spec.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), logf, logf
	cmd.ExtraFiles = []*os.File{w} // fd 3: the ready line
	cmd.SysProcAttr = detached()
	err = cmd.Start()
	w.Close()
	if err != nil {
		return Status{}, fmt.Errorf("start the task's process: %w", err)
	}
	go cmd.Wait() //nolint:errcheck // reaped while this process lives; the task's outcome is in the store
	return readReady(ctx, r, logPath)
}

// Self is the argv of this program run again as it was, with extra
// after its arguments: how a CLI makes Options.Command of itself. Nil
// when the program cannot find itself.
func Self(extra ...string) []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return append(append([]string{exe}, os.Args[1:]...), extra...)
}

// readReady reads the task process's ready line; ctx ending stops the
// wait, not the task.
func readReady(ctx context.Context, r *os.File, logPath string) (Status, error) {
	stop := context.AfterFunc(ctx, func() { r.Close() })
	defer stop()
	b, _ := io.ReadAll(r)
	var rd ready
	switch {
	case ctx.Err() != nil:
		return Status{}, fmt.Errorf("task_start was cancelled while the task started: task_status tells whether it did")
	case len(bytes.TrimSpace(b)) == 0:
		return Status{}, fmt.Errorf("the task's process ended before the task started: see %s", logPath)
	case json.Unmarshal(b, &rd) != nil:
		return Status{}, fmt.Errorf("the task's process said %q: see %s", strings.TrimSpace(string(b)), logPath)
	case rd.Error != "":
		return Status{}, errors.New(rd.Error)
	case rd.Status == nil:
		return Status{}, fmt.Errorf("the task's process said nothing of the task: see %s", logPath)
	}
	return *rd.Status, nil
}

// Drive is a task's own process (Options.Command runs it with the
// launching server's options): it reads the task from in, starts it as
// task_start does in process, says how that went on out (one line, then
// closes it) and drives the task to its end. Meanwhile the task is
// steerable through the store: its events go to the workspace's stored
// stream and its human channel follows the workspace's journal, where
// task_answer, task_note and task_interrupt of any session append. ctx
// ending cuts the task at once (its step recorded as cut); it continues
// with the next task_start or flower in its directory.
func (s *Server) Drive(ctx context.Context, in io.Reader, out io.WriteCloser) error {
	s.steered = true
	var sp spec
	err := json.NewDecoder(in).Decode(&sp)
	if err == nil {
		sp.Directory, err = absDir(sp.Directory)
	}
	if err != nil {
		say(out, ready{Error: fmt.Sprintf("task process: read the task: %v", err)})
		return err
	}
	t, err := s.start(ctx, sp.Directory, sp.Task)
	if err != nil {
		say(out, ready{Error: err.Error()})
		return err
	}
	st := t.status(ctx)
	say(out, ready{Status: &st})
	select {
	case <-t.done:
	case <-ctx.Done():
		t.cut(context.Cause(ctx))
		<-t.done
	}
	return nil
}

func say(out io.WriteCloser, rd ready) {
	b, _ := json.Marshal(rd)
	out.Write(append(b, '\n')) //nolint:errcheck // the launcher may be gone: the task goes on
	out.Close()
}
