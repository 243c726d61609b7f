//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/flower-run/flower/model/modeltest"
)

// TestMCPServerIsSandboxed: a stdio MCP server runs in the sandbox Bash
// commands run in (R9.2). The filesystem server from npm is told it may
// use a directory outside the workspace, but Landlock refuses its write
// there, while its write in the workspace succeeds. Started by npx (with
// HOME outside the workspace), it still runs: npx gets its cache.
func TestMCPServerIsSandboxed(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux's")
	}
	index := npmServerIndex(t, "server-filesystem")
	for _, viaNpx := range []bool{false, true} {
		t.Run(fmt.Sprintf("npx=%v", viaNpx), func(t *testing.T) {
			t.Parallel()
			dir, outside, home := t.TempDir(), t.TempDir(), t.TempDir()
			ws, _ := filepath.EvalSymlinks(dir)
			outside, _ = filepath.EvalSymlinks(outside)
			server := map[string]any{"command": "node", "args": []string{index, ws, outside}}
			if viaNpx {
				// npx finds the package installed in the workspace, offline.
				if err := os.Symlink(filepath.Join(filepath.Dir(index), "..", "..", ".."), filepath.Join(dir, "node_modules")); err != nil {
					t.Fatal(err)
				}
				server = map[string]any{"command": "npx", "args": []string{"--offline", "mcp-server-filesystem", ws, outside}}
			}
			writeMCPJSON(t, dir, map[string]any{"files": server})
			write := func(path string) modeltest.Turn {
				return call("", "mcp__files__write_file", map[string]any{"path": path, "content": "from MCP"})
			}
			srv, env := fakeModelWith(t, modeltest.Script(write(filepath.Join(outside, "escaped")), write(filepath.Join(ws, "inside")),
				modeltest.Turn{Text: "done"}))
			r := runFlower(t, dir, append(env, "HOME="+home), "once", "write over MCP")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(outside, "escaped")); !os.IsNotExist(err) {
				t.Errorf("the MCP server wrote outside the workspace (stat: %v)", err)
			}
			if b, err := os.ReadFile(filepath.Join(ws, "inside")); err != nil || string(b) != "from MCP" {
				t.Errorf("the MCP server could not write the workspace: %q, %v\n%s", b, err, r.stdout)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3\n%s", len(reqs), r.stdout)
			}
			got := toolResults(reqs[1])
			if len(got) == 0 || !strings.Contains(strings.ToLower(got[len(got)-1]), "permission denied") && !strings.Contains(got[len(got)-1], "EACCES") {
				t.Errorf("the write outside gave %q, want a permission error", got)
			}
		})
	}
}
