package mcp

import (
	"path/filepath"
	"testing"

	"github.com/flower-run/flower/internal/npmtest"
)

// npmServer is the entry point of a server installed from npm into
// testdata/npm by .ci/run (npmtest.Server).
func npmServer(t testing.TB, pkg string) string {
	t.Helper()
	return npmtest.Server(t, filepath.Join("testdata", "npm"), pkg)
}
