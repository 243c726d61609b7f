package sandbox

import (
	"path/filepath"
	"slices"
)

// protectedNames are the workspace's paths that decide what the next
// start of flower enforces or runs (issue 20): its configuration (the
// sandbox, the permission rules), its MCP servers, Claude Code's settings,
// and what git runs on the person's next commit. An agent that could
// rewrite them could switch its own sandbox off. "flower.yaml" is
// config.FileName, and the instruction files are config.AgentsFile and
// config.ClaudeFile (config imports this package; TestProtectedPaths there
// checks they agree).
var protectedNames = []string{"flower.yaml", ".mcp.json", ".claude", ".git/hooks", ".git/config"}

// instructionNames are the instruction files, protected when flower.yaml
// says sandbox.protect_instructions: true.
var instructionNames = []string{"AGENTS.md", "CLAUDE.md"}

// Protected lists the paths of workspace (absolute) that tool processes
// may read but not change, and the file tools refuse to write: the one
// list both use (Config.Protect; builtin.Env.Protected). Paths that do
// not exist are listed too: the file tools refuse to create them.
func Protected(workspace string, instructions bool) []string {
	names := protectedNames
	if instructions {
		names = slices.Concat(names, instructionNames)
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(workspace, filepath.FromSlash(n))
	}
	return out
}

// Protected is the sandbox's Config.Protect: the paths its processes may
// not change.
func (s *Sandbox) Protected() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.cfg.Protect)
}

// within reports whether p is dir or below it; both clean and absolute.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && (len(rel) < 3 || rel[:3] != ".."+string(filepath.Separator))
}

// hidden is Config.Hide without the directories that hold a path tool
// processes must reach (the workspace, TMPDIR, a writable path): a run
// dir may be an ancestor of the workspace, and hiding it would hide the
// workspace too; the file tools still refuse it.
func hidden(cfg Config, tmp string) []string {
	var out []string
	for _, d := range cfg.Hide {
		d = filepath.Clean(d)
		reach := slices.Concat([]string{cfg.Workspace, tmp}, cfg.Writable)
		if !slices.ContainsFunc(reach, func(p string) bool { return within(d, filepath.Clean(p)) }) {
			out = append(out, d)
		}
	}
	return out
}
