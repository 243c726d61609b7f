package flower

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/mcp"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/sandbox"
	"github.com/flower-run/flower/tool"
	"github.com/flower-run/flower/tool/builtin"
)

// What keeps the agent away from flower and the person's secrets (issue
// 10): the sandbox of its tool processes, the permission rules of its
// calls (flower.yaml sandbox and permissions; R9.2, R9.3), the secrets
// scrubbed from what it sees.

// LoadConfig reads flower.yaml (over the user's config) and declares the
// models it describes, so their prices and windows count (a budget on a
// local model). A bad file is a *UsageError naming it, and so is a
// workspace config a person has not approved since it changed
// (ConfirmConfig, unattended: approve.go).
func LoadConfig(ws string) (config.Config, error) {
	if err := ConfirmConfig(ws, nil); err != nil {
		return config.Config{}, err
	}
	cfg, err := config.Load(ws)
	if err != nil {
		return cfg, &UsageError{Err: err}
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

// contain builds the sandbox and the permission rules of the workspace,
// and launches the sandbox's helper now when prestart is set.
func (h *Host) contain(prestart bool) error {
	rules, err := h.cfg.PermissionRules(h.ws)
	if err != nil {
		return usage("%s: %v", config.FileName, err)
	}
	sb, err := sandbox.New(h.sandboxConfig())
	if errors.Is(err, sandbox.ErrUnavailable) {
		return fmt.Errorf("%w (set sandbox.mode: auto in %s to run without it)", err, config.FileName)
	}
	if err != nil {
		return err
	}
	h.box, h.rules = sb, rules
	h.onClose(func() { _ = sb.Close() })
	// The helper's launch (a whole flower process) overlaps the first
	// model request instead of delaying the first Bash call, and the note
	// about namespaces waits for the probe (a process too) on its own
	// (issue 19); Close waits for it.
	if prestart {
		sb.Prestart()
	}
	if note := sb.Note(); note != "" {
		noteTo(h.notice(), "flower: sandbox: %s", note)
	}
	noted := make(chan struct{})
	go func() {
		defer close(noted)
		if note := sandbox.NamespaceNote(); note != "" {
			noteTo(h.notice(), "flower: sandbox: %s", note)
		}
	}()
	h.onClose(func() { <-noted })
	return nil
}

// toolEnv confines the built-in tools to the workspace, runs their
// processes in the sandbox and keeps them out of the run dir, wherever it
// is.
func (h *Host) toolEnv() *builtin.Env {
	abs, err := filepath.Abs(h.runDir)
	if err != nil {
		abs = h.runDir
	}
	forbidden := []string{abs}
	if dir, err := ApprovedDir(); err == nil {
		forbidden = append(forbidden, dir) // what a person approved, for ConfirmConfig
	}
	return &builtin.Env{Workspace: h.ws, Forbidden: forbidden, Sandbox: h.box, Protected: h.box.Protected(),
		Hidden: h.rules.Hides, Environ: h.toolEnviron()}
}

// toolEnviron is the environment of every process run for the agent (Bash,
// hooks): the allow list of flower.yaml's env, with its set and then the
// Claude Code settings' env added; withheld names never pass (issue 20, 21).
func (h *Host) toolEnviron() []string {
	p := h.cfg.Env.Policy()
	if len(h.cfg.Claude.Env) > 0 {
		set := maps.Clone(p.Set)
		if set == nil {
			set = map[string]string{}
		}
		for k, v := range h.cfg.Claude.Env {
			if _, ok := set[k]; !ok { // flower.yaml's env.set wins
				set[k] = v
			}
		}
		p.Set = set
	}
	return p.Environ(os.Environ())
}

// sandboxConfig is flower.yaml's sandbox with flower's state hidden from
// tool processes (issue 20): the run dir and the state home's flower
// directory (every workspace's run dir, locks and leases).
func (h *Host) sandboxConfig() sandbox.Config {
	c := h.cfg.SandboxConfig(h.ws)
	if abs, err := filepath.Abs(h.runDir); err == nil {
		c.Hide = append(c.Hide, abs)
	}
	if home, err := StateHome(); err == nil {
		c.Hide = append(c.Hide, filepath.Join(home, "flower"))
	}
	return c
}

// Secrets are the values flower scrubs: its keys and token from the
// environment, the variables flower.yaml lists under sandbox.secrets, and
// extra. It also hardens this process against processes of the same user
// (sandbox.Harden: those variables blanked in /proc/<flower>/environ, no
// ptrace).
//
// The credentials of flower's environment (tool.HeldSecrets: FLOWER_STORE,
// a DATABASE_URL with a password, a GITHUB_TOKEN...), which no tool gets
// (tool.EnvPolicy), are scrubbed and blanked too (issue 20 item 4).
func Secrets(cfg config.Config, extra ...string) *tool.Secrets {
	held, values := tool.HeldSecrets(os.Environ())
	names := append(append(slices.Clone(tool.SecretEnv), cfg.Sandbox.Secrets...), held...)
	_ = sandbox.Harden(names) // best effort
	values = append(append(tool.SecretValues(os.Getenv, cfg.Sandbox.Secrets...), values...), extra...)
	return tool.NewSecrets(values...)
}

// Redacting scrubs sec from the text of every event before sink sees it:
// a front end shows, and a Web client receives, no key.
func Redacting(sec *tool.Secrets, sink event.Sink) event.Sink {
	return func(e event.Event) {
		e.Text = sec.Redact(e.Text)
		sink(e)
	}
}

// Instructions reads the project's instruction files at every call: the
// runtime calls it as each step starts, so an edit reaches the next step.
func Instructions(ws string) func() string {
	return func() string { return config.InstructionsPrompt(config.Instructions(ws)) }
}

// mcpServers reads the workspace's MCP servers (.mcp.json with
// flower.yaml's mcp: over it) as a tool source. Nothing starts here: the
// servers start when the first step asks for its tools, and report their
// banner line (or a failure) on Options.Notice then.
func (h *Host) mcpServers() ([]tool.Source, error) {
	servers, err := mcp.Load(h.ws, h.cfg.MCP)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	if len(servers) == 0 {
		return nil, nil
	}
	var mu sync.Mutex // serializes lines from servers starting concurrently
	out := h.notice()
	set := mcp.New(servers, mcp.Options{Workspace: h.ws, Contain: mcpContain(h.box), Env: h.cfg.Env.Policy().Environ(os.Environ()), Report: func(line string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(out, line)
	}})
	h.onClose(func() { _ = set.Close() })
	return []tool.Source{set}, nil
}

// mcpContain runs stdio MCP servers in the sandbox Bash commands run in
// (R9.2; mcp.Options.Contain): they write only the workspace, the run's
// TMPDIR and sandbox.writable, die with flower, and see no process of
// flower's. npx and npm also get their cache (npm_config_cache, else
// ~/.npm), which they cannot run without; no other process gets it. Nil
// where there is no sandbox helper (not Linux).
func mcpContain(sb *sandbox.Sandbox) func(*exec.Cmd) (started, end func(), err error) {
	if !sandbox.Supported {
		return nil
	}
	return func(cmd *exec.Cmd) (started, end func(), err error) {
		box := sb
		if cache := npmCache(cmd); cache != "" {
			_ = os.MkdirAll(cache, 0o755) // made outside the sandbox, which could not create it in ~
			box = sb.Widen(cache)
		}
		g, err := box.Wrap(cmd)
		if err != nil {
			return nil, nil, err
		}
		return g.Started, g.End, nil
	}
}

// npmCache is the npm cache a server started by npx or npm writes, from
// the environment the server gets; "" for other commands.
func npmCache(cmd *exec.Cmd) string {
	if name := filepath.Base(cmd.Path); name != "npx" && name != "npm" {
		return ""
	}
	var home string
	for _, kv := range cmd.Env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "npm_config_cache", "NPM_CONFIG_CACHE":
			if filepath.IsAbs(v) {
				return v
			}
		case "HOME":
			home = v
		}
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".npm")
}
