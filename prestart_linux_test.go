package flower_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/internal/proctest"
	"github.com/flower-run/flower/sandbox"
)

// helpers are the pids of this process's children that are the sandbox's
// helper (argv[0] flower-sandbox).
func helpers(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err1 := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		cmd, err2 := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err1 != nil || err2 != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(os.Getpid()) && strings.HasPrefix(string(cmd), "flower-sandbox\x00") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestStartPrestartsTheHelper: Start launches the sandbox's helper before
// any tool asks for it, so that the launch overlaps the first model
// request instead of delaying the first Bash call (issue 19), and Close
// ends it.
func TestStartPrestartsTheHelper(t *testing.T) {
	if len(helpers(t)) != 0 {
		t.Fatal("a helper runs before the test")
	}
	ctx := context.Background()
	h, err := flower.Open(ctx, flower.Options{Workspace: t.TempDir(), RunDir: t.TempDir(), Model: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Start(ctx, flower.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	if sandbox.NamespaceNote() != "" {
		t.Skip("no namespaces here: each command gets a helper of its own")
	}
	if !proctest.Poll(func() bool { return len(helpers(t)) == 1 }) {
		t.Fatalf("no helper started by Start (helpers %v)", helpers(t))
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if got := helpers(t); len(got) != 0 {
		t.Fatalf("helpers %v still running after Close", got)
	}
}
