package agent_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAgentLinksNoYAMLParser: an embedder of the agent passes plain
// resume.Policies, and a store of its choosing; reading flower.yaml and
// opening SQLite are the CLI's business (issue 9).
func TestAgentLinksNoYAMLParser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goBin, "list", "-deps", "github.com/flower-run/flower/agent").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/flower-run/flower/config" || strings.Contains(dep, "go-yaml") ||
			dep == "github.com/flower-run/flower/store/sqlite" || dep == "modernc.org/sqlite" {
			t.Errorf("agent depends on %s", dep)
		}
	}
}
