package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/permission"
	"github.com/flower-run/flower/sandbox"
	"github.com/flower-run/flower/tool"
)

// containment is what confines the agent of one process: the sandbox of
// its tool processes and the permission rules of its calls (flower.yaml
// sandbox and permissions; R9.2, R9.3).
type containment struct {
	sandbox *sandbox.Sandbox
	rules   *permission.Rules
}

// contain builds the containment for ws and says in one line on out what
// the sandbox cannot contain here. sandbox.mode: required on a system
// without Landlock is an error.
func contain(cfg config.Config, ws string, out io.Writer) (*containment, error) {
	if abs, err := filepath.Abs(ws); err == nil {
		ws = abs
	}
	rules, err := cfg.PermissionRules(ws)
	if err != nil {
		return nil, usageErr("%s: %v", config.FileName, err)
	}
	sb, err := sandbox.New(cfg.SandboxConfig(ws))
	if errors.Is(err, sandbox.ErrUnavailable) {
		return nil, &exitError{code: exitFailed, err: fmt.Errorf("%w (set sandbox.mode: auto in %s to run without it)", err, config.FileName)}
	}
	if err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	if note := sb.Note(); note != "" {
		fmt.Fprintf(out, "flower: sandbox: %s\n", note)
	}
	return &containment{sandbox: sb, rules: rules}, nil
}

// toolEnv is base, the built-in tools' settings, under this containment.
func (c *containment) toolEnv(base *tool.Env) *tool.Env {
	base.Sandbox = c.sandbox
	return base
}

// Close removes the sandbox's TMPDIR.
func (c *containment) Close() { _ = c.sandbox.Close() }
