package main

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/flower-run/flower/model/modeltest"
)

// TestAgentCannotRewriteItsConfig: through the real binary (issue 20), a
// model's Write and Bash of flower.yaml leave it as the person wrote it,
// and Bash finds no file of flower's state (the store included) where
// it lives by default, nor holds a capability.
func TestAgentCannotRewriteItsConfig(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the mount view is Linux's")
	}
	dir := t.TempDir()
	state, stateEnv := defaultState(t)
	const yaml = "sandbox:\n  mode: auto\n"
	writeTestFile(t, filepath.Join(dir, "flower.yaml"), yaml)
	srv, env := fakeModelWith(t, modeltest.Script(
		call("", "Write", map[string]any{"file_path": "flower.yaml", "content": "sandbox: {mode: off}\n"}),
		bashTurn("echo 'sandbox: {mode: off}' > flower.yaml; rm -f flower.yaml; echo in > inside"),
		bashTurn("echo files: $(find "+state+" -type f | wc -l); cat "+state+"/flower/projects/*/sessions.db | wc -c"),
		bashTurn("grep CapEff /proc/self/status; mknod dev c 1 3 || echo no mknod"),
		modeltest.Turn{Text: "done"},
	))
	r := runFlower(t, dir, append(env, stateEnv...), "once", "switch the sandbox off")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := readFile(t, filepath.Join(dir, "flower.yaml")); got != yaml {
		t.Errorf("flower.yaml now holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(projectsOf(t, state), "sessions.db")); err != nil {
		t.Fatalf("the store is not where the test looked: %v", err)
	}
	results := callResults(t, srv.Requests(), 4)
	wantIn(t, "Write flower.yaml", results[0], "protected configuration")
	wantIn(t, "Bash flower.yaml", results[1], "Read-only file system")
	if _, err := os.Stat(filepath.Join(dir, "inside")); err != nil {
		t.Errorf("Bash could not write the rest of the workspace: %v", err)
	}
	wantIn(t, "state", results[2], "files: 0", "No such file")
	wantIn(t, "capabilities", results[3], "CapEff:\t0000000000000000", "no mknod")
}
