package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/flower-run/flower/sandbox"
)

// Sandbox is flower.yaml's sandbox key (R9.2):
//
//	sandbox:
//	  mode: auto          # auto | required | off
//	  network: true       # false denies TCP connect and bind
//	  writable: [~/.cache/go-build, /tmp]
//	  secrets: [GITHUB_TOKEN]   # contain.go: scrubbed from results, events and the store
//	  protect_instructions: true   # AGENTS.md and CLAUDE.md read-only for the agent too
//
// Network is a pointer so that an unset key keeps the default, true.
type Sandbox struct {
	Mode     SandboxMode `yaml:"mode"`
	Network  *bool       `yaml:"network"`
	Writable []string    `yaml:"writable"`
	Secrets  []string    `yaml:"secrets"`
	// ProtectInstructions adds the instruction files to the paths tools
	// may not change (sandbox.Protected; issue 20). Off by default: many
	// projects let the agent keep its AGENTS.md up to date.
	ProtectInstructions bool `yaml:"protect_instructions"`
}

// SandboxMode is sandbox.mode, checked where the decoder holds its node.
type SandboxMode string

func (m *SandboxMode) UnmarshalYAML(node ast.Node) error {
	s, ok := node.(*ast.StringNode)
	if !ok || !sandbox.Mode(s.Value).Valid() || s.Value == "" {
		return &valueError{node: node, msg: fmt.Sprintf("got %s, want auto, required or off", describeValue(node))}
	}
	*m = SandboxMode(s.Value)
	return nil
}

// describeValue names a bad value for a message: its text if a string.
func describeValue(node ast.Node) string {
	if s, ok := node.(*ast.StringNode); ok {
		return fmt.Sprintf("%q", s.Value)
	}
	return kindOf(node)
}

// SandboxConfig is the sandbox as package sandbox takes it, for the
// workspace: writable paths made absolute (~ is the home directory,
// relative paths are relative to the workspace), and the protected paths:
// the workspace's and the person's own (UserProtected). Config.Hide (flower's state) is the caller's.
func (c Config) SandboxConfig(workspace string) sandbox.Config {
	out := sandbox.Config{Mode: sandbox.Mode(c.Sandbox.Mode), Workspace: workspace, Network: true,
		Protect: sandbox.Protected(workspace, c.Sandbox.ProtectInstructions)}
	for _, p := range UserProtected() {
		if !slices.Contains(out.Protect, p) { // ~/.claude when the workspace is ~
			out.Protect = append(out.Protect, p)
		}
	}
	if c.Sandbox.Network != nil {
		out.Network = *c.Sandbox.Network
	}
	home, _ := os.UserHomeDir()
	for _, w := range c.Sandbox.Writable {
		switch {
		case w == "~" || strings.HasPrefix(w, "~/"):
			w = filepath.Join(home, strings.TrimPrefix(w, "~"))
		case !filepath.IsAbs(w):
			w = filepath.Join(workspace, w)
		}
		out.Writable = append(out.Writable, filepath.Clean(w))
	}
	out.Writable = append(out.Writable, c.Claude.AdditionalDirectories...)
	return out
}
