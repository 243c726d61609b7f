package postgres_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoSQLite: a PostgreSQL-only build links no SQLite. Both backends
// share the entry codec through store/internal/codec, not through each
// other (issue 19).
func TestNoSQLite(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the package's dependencies")
	}
	out, err := exec.Command(gobin, "list", "-deps", "github.com/flower-run/flower/store/postgres").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "modernc.org/sqlite") || dep == "github.com/flower-run/flower/store/sqlite" {
			t.Errorf("store/postgres depends on %s", dep)
		}
	}
}
