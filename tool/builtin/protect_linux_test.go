package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/sandbox"
	"github.com/flower-run/flower/tool"
)

// TestBashCreatesNoProtectedPath (issue 20, open item 1): a protected
// path missing when a command starts (the mount view has no mount point
// for it) and created by the command, or by a process it left looping in
// the background, is gone when the call returns, the model is told, and
// nothing else changes: the rest of the workspace keeps the command's
// writes, and no file the workspace did not have is left. The same holds
// for a background shell when it ends.
func TestBashCreatesNoProtectedPath(t *testing.T) {
	env := testEnv(t)
	ws := env.Workspace
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil { // a repository without hooks
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, ".flower"), 0o755); err != nil { // notes, no project id yet
		t.Fatal(err)
	}
	// The person's own config where the home directory is the workspace,
	// with no ~/.config yet (config.UserProtected).
	userDir := filepath.Join(ws, ".config", "flower")
	env = sandboxIn(t, env, sandbox.Config{Protect: append(sandbox.Protected(ws, false), userDir)})
	env.Shells = NewShells()
	tools := tool.NewRegistry(Builtins(env)...)
	res := run(t, tools["Bash"], map[string]any{"command": `
echo 'sandbox: {mode: "off"}' > flower.yaml
echo '{}' > .mcp.json
mkdir .git/hooks && echo 'evil' > .git/hooks/pre-commit
echo another-projects-id > .flower/project
setsid sh -c 'while :; do mkdir -p .claude; echo x > .claude/settings.json; done' >/dev/null 2>&1 &
until [ -e .claude/settings.json ]; do :; done
mkdir -p .config/flower && echo 'model: mine' > .config/flower/config.yaml
echo kept > kept.txt; echo made`})
	wantOK(t, res, "made", "flower removed flower.yaml, .mcp.json, .claude, .git/hooks, .flower/project, .config/flower, which this command created")
	for _, p := range []string{"flower.yaml", ".mcp.json", ".claude", ".git/hooks", ".flower/project", ".config/flower"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there after the call (lstat: %v)", p, err)
		}
	}
	if got := readFile(t, filepath.Join(ws, "kept.txt")); got != "kept\n" {
		t.Errorf("kept.txt = %q: the rest of the workspace lost the command's write", got)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git")); err != nil {
		t.Errorf(".git, which was there, is gone: %v", err)
	}

	ctx := tool.WithCall(context.Background(), "toolu_bgp")
	if _, err := tools["Bash"].Run(ctx, json.RawMessage(`{"command": "echo '{}' > .mcp.json; ln -s kept.txt flower.yaml", "run_in_background": true}`)); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	eventually(t, "the background shell ends", func() bool {
		r := run(t, tools["BashOutput"], map[string]any{"bash_id": "toolu_bgp"})
		seen.WriteString(r.Content)
		return strings.Contains(r.Content, "Status: exited")
	})
	wantContains(t, seen.String(), "flower removed flower.yaml, .mcp.json")
	if _, err := os.Lstat(filepath.Join(ws, ".mcp.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the background shell's .mcp.json is still there (lstat: %v)", err)
	}
	if got := readFile(t, filepath.Join(ws, "kept.txt")); got != "kept\n" {
		t.Errorf("removing the symlink flower.yaml changed its target: %q", got)
	}
}
