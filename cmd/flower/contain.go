package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/sandbox"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
	"github.com/flower-run/flower/workflow"
	"github.com/flower-run/flower/workflow/starter"
)

// What keeps the agent away from flower and the person's secrets (issue
// 10), wired for the CLI.

// processSecrets are secret values this process made or was given other
// than by its environment (the serve token); guarded by secretsMu.
var (
	secretsMu      sync.Mutex
	processSecrets []string
)

// addSecret makes v one of the values scrubbed from what flower writes.
func addSecret(v string) {
	secretsMu.Lock()
	processSecrets = append(processSecrets, v)
	secretsMu.Unlock()
}

// knownSecrets are the values flower scrubs: its keys and token from the
// environment, the variables flower.yaml lists under sandbox.secrets,
// and the secrets of this process. It also hardens the process against
// processes of the same user (sandbox.Harden: those variables blanked in
// /proc/<flower>/environ, no ptrace).
func knownSecrets(cfg config.Config) *tool.Secrets {
	_ = sandbox.Harden(append(slices.Clone(tool.SecretEnv), cfg.Sandbox.Secrets...)) // best effort; see Harden
	secretsMu.Lock()
	defer secretsMu.Unlock()
	return tool.NewSecrets(append(tool.SecretValues(os.Getenv, cfg.Sandbox.Secrets...), processSecrets...)...)
}

// redacting scrubs the secrets from the text of every event before sink
// sees it: a front end shows, and a Web client receives, no key.
func redacting(sec *tool.Secrets, sink event.Sink) event.Sink {
	return func(e event.Event) {
		e.Text = sec.Redact(e.Text)
		sink(e)
	}
}

// loadConfig reads flower.yaml and declares the models it describes, so
// their prices and windows count (a --budget on a local model).
func loadConfig(ws string) (config.Config, error) {
	cfg, err := config.Load(ws)
	if err != nil {
		return cfg, usageErr("%v", err)
	}
	for name, m := range cfg.Models {
		info := model.Info{Window: m.Window, Input: *m.InputPerMTok, Output: *m.OutputPerMTok}
		if info.Window == 0 {
			info.Window = model.Unknown.Window
		}
		model.Declare(name, info)
	}
	return cfg, nil
}

// toolEnv confines the built-in tools to ws and keeps them out of the run
// dir, wherever it is.
func toolEnv(ws, runDir string) *tool.Env {
	abs, err := filepath.Abs(runDir)
	if err != nil {
		abs = runDir
	}
	return &tool.Env{Workspace: ws, Forbidden: []string{abs}}
}

// ensureWorkbench creates the workbench .flower/ with a .gitignore of
// everything, so a `git add -A` never commits flower's notes. A
// workbench the person made is left as it is.
func ensureWorkbench(ws string) error {
	dir := filepath.Join(ws, starter.WorkbenchDir)
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("# flower's workbench: notes, handoffs, spilled results\n*\n"), 0o644); err != nil {
		return fmt.Errorf("create %s/.gitignore: %w", dir, err)
	}
	return nil
}

// restoreNotes writes back the notes the agent deleted and says so.
func restoreNotes(ctx context.Context, s store.Store, ws string, out io.Writer) error {
	restored, err := starter.SyncNotes(ctx, s, ws)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if len(restored) > 0 {
		fmt.Fprintf(out, "note: restored %s from the store (it had been deleted)\n", strings.Join(restored, " and "))
	}
	return nil
}

// lockWorkspace makes this process the only one working in ws, whatever
// run dir each uses (issue 10): the lock is in ws's directory under the
// state directory. It is the run dir's own lock when the run dir is that
// directory.
func lockWorkspace(ws, runDir string, now time.Time) (unlock func(), err error) {
	dir, err := projectDir(ws)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if sameDir(dir, runDir) || filepath.Clean(dir) == filepath.Clean(runDir) {
		return func() {}, nil
	}
	return lockProject(ws, dir, now)
}

// lockProject takes the lock of dir, ws's directory under the state
// directory, refusing in one line that names the holder.
func lockProject(ws, dir string, now time.Time) (unlock func(), err error) {
	unlock, err = workflow.Lock(dir, now)
	if errors.Is(err, workflow.ErrBusy) {
		o, _ := workflow.Holder(dir)
		return nil, &exitError{code: exitFailed, err: fmt.Errorf("%w: flower pid %d on %s has worked in %s since %s: two runs never share a workspace; wait for it to end, or see flower ps",
			workflow.ErrBusy, o.PID, o.Host, tilde(ws), o.Since.Format("15:04:05"))}
	}
	if err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	return unlock, nil
}

// containFlags are the flags of issue 10 every command shares.
func containFlags(pf *pflag.FlagSet, g *globals) {
	pf.DurationVar(&g.idle, "idle-timeout", 0, "cut and retry a model stream silent this long (default model.idle_timeout in flower.yaml, else "+model.DefaultIdleTimeout.String()+")")
}

// modelClient is the HTTP client of model calls: it cuts a silent server
// (a stall), which the retrier then retries. --idle-timeout wins over
// flower.yaml's model.idle_timeout.
func modelClient(g *globals, cfg config.Config) *http.Client {
	idle := cfg.Model.Idle()
	if g.idle > 0 {
		idle = g.idle
	}
	return model.NewHTTPClient(cfg.Model.FirstByte(), idle)
}

// checkIdle refuses an --idle-timeout too short to mean anything.
func checkIdle(g *globals) error {
	if g.idle != 0 && g.idle < time.Second {
		return usageErr("--idle-timeout %s: give at least 1s (e.g. 2m), or leave it out for the default", g.idle)
	}
	return nil
}

// checkAsks range-checks --timeout and --max-asks: a NaN, or a negative
// other than the -1 each documents, would silently mean something else.
func checkAsks(timeout float64, maxAsks int) error {
	if math.IsNaN(timeout) || math.IsInf(timeout, 0) || (timeout < 0 && timeout != -1) {
		return usageErr("--timeout %v: give seconds >= 0 (0: unattended), or -1 to wait forever", timeout)
	}
	if maxAsks < -1 {
		return usageErr("--max-asks %d: give 0 or more questions, or -1 for no limit", maxAsks)
	}
	return nil
}
