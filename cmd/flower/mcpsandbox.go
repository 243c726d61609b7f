package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/flower-run/flower/sandbox"
)

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
