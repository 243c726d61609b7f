// Package npmtest finds the real MCP servers from npm that .ci/run
// installs (npm ci in mcp/testdata/npm) for the tests of mcp and
// cmd/flower.
package npmtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Server is the entry point (dist/index.js) of @modelcontextprotocol/pkg
// installed under root, the mcp/testdata/npm directory as the calling
// test's package sees it. Outside CI, a machine without node or without
// the install skips the test with one line; in CI the test must run.
func Server(t testing.TB, root, pkg string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join(root, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	_, nodeErr := exec.LookPath("node")
	_, statErr := os.Stat(path)
	switch {
	case nodeErr == nil && statErr == nil:
		return path
	case os.Getenv("CI") != "":
		t.Fatalf("CI: %s is not installed (node: %v; %v): .ci/run must run npm ci in mcp/testdata/npm", pkg, nodeErr, statErr)
	case nodeErr != nil:
		t.Skip("node is not installed: the real MCP server tests need node and npm (CI installs them)")
	}
	t.Skipf("%s not installed: run npm ci in mcp/testdata/npm", pkg)
	return ""
}
