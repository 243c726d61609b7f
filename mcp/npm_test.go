package mcp

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// npmServer is the entry point of a server installed from npm into
// testdata/npm by .ci/run (npm ci). Outside CI, a machine without node or
// without the install skips with one line; in CI the test must run.
func npmServer(t testing.TB, pkg string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js"))
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
