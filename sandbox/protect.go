package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// protectedNames are the workspace's paths that decide what the next
// start of flower enforces or runs (issue 20): its configuration (the
// sandbox, the permission rules), its MCP servers, Claude Code's settings,
// what git runs on the person's next commit, and the project's id, which
// decides whose state the next start takes if the directory moved. An
// agent that could rewrite them could switch its own sandbox off, or
// hand this directory another project's state. "flower.yaml" is
// config.FileName, the instruction files are config.AgentsFile and
// config.ClaudeFile (config imports this package; TestProtectedPaths there
// checks they agree), and ".flower/project" is project.IDFile
// (TestProtectedProjectID).
var protectedNames = []string{"flower.yaml", ".mcp.json", ".claude", ".git/hooks", ".git/config", ".flower/project"}

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

// Watch is the protected paths that were missing when a command started
// (WatchProtected), for Undo to remove once it has ended.
type Watch struct {
	workspace string
	missing   []string
}

// WatchProtected notes which protected paths do not exist now. The mount
// view cannot protect them (a mount needs a mount point, which would be a
// new file in the person's workspace), so a command may create them; Undo
// removes what it created (doc.go: "Protected paths that do not exist").
// Two kinds are not watched:
//   - .git/hooks and .git/config where there is no .git: the command then
//     makes a repository of its own (git init), which is its work like
//     any other file;
//   - a path outside the workspace and the writable paths (the person's
//     own configuration, UserProtected, where the home directory is not
//     writable): a command cannot create it there, so one that appears is
//     another program's, such as Claude Code making ~/.claude at its first
//     start, and the undo would take it.
func (s *Sandbox) WatchProtected() Watch {
	if s == nil {
		return Watch{}
	}
	w := Watch{workspace: s.cfg.Workspace}
	for _, p := range s.cfg.Protect {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) || !s.mayWrite(p) {
			continue
		}
		if parent := filepath.Dir(p); filepath.Base(parent) == ".git" {
			if _, err := os.Lstat(parent); err != nil {
				continue
			}
		}
		w.missing = append(w.missing, p)
	}
	return w
}

// Undo removes the watched paths that exist now, and returns one
// sentence for the model that says so, or "". Call it when the command
// and every process it started are gone (Process.Wait), so that nothing
// can create them again behind it. A symlink is removed, never what it
// points to.
func (w Watch) Undo() string {
	var removed, failed []string
	for _, p := range w.missing {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		name := p
		if rel, err := filepath.Rel(w.workspace, p); err == nil {
			name = filepath.ToSlash(rel)
		}
		if err := os.RemoveAll(p); err != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", name, err))
			continue
		}
		removed = append(removed, name)
	}
	var out []string
	if len(removed) > 0 {
		out = append(out, fmt.Sprintf("flower removed %s, which this command created: protected configuration is for a person to create.", strings.Join(removed, ", ")))
	}
	if len(failed) > 0 {
		out = append(out, fmt.Sprintf("flower could not remove %s, which this command created: a person must.", strings.Join(failed, ", ")))
	}
	return strings.Join(out, " ")
}

// mayWrite reports whether p is where the config lets commands write:
// the workspace or a writable path. (Where Landlock is off they may write
// more, but a path elsewhere that appears during a command is as likely
// another program's.)
func (s *Sandbox) mayWrite(p string) bool {
	w := slices.Concat([]string{s.cfg.Workspace}, s.cfg.Writable)
	return slices.ContainsFunc(w, func(d string) bool { return within(filepath.Clean(d), p) })
}
