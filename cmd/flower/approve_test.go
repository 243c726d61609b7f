//go:build linux || darwin

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/flower-run/flower"

	"github.com/flower-run/flower/model/modeltest"
)

// TestAgentCannotChangeItsConfig (issue 20 item 2): a model's Write of
// sandbox: {mode: off} (dropping a deny rule) to flower.yaml changes
// nothing the next start enforces until a person confirms it: unattended
// starts are refused with one line naming the file and flower allow, and
// run nothing; flower allow without a terminal is refused too; at a
// terminal it shows the diff, a no keeps the refusal, a yes applies it.
func TestAgentCannotChangeItsConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "flower.yaml"), "permissions:\n  deny: [\"Bash(touch:*)\"]\n")
	srv, env := fakeModelWith(t, modeltest.Script(
		call("", "Write", map[string]any{"file_path": "flower.yaml", "content": "sandbox: {mode: \"off\"}\n"}),
		modeltest.Turn{Text: "done"},
		bashTurn("touch T"),
		modeltest.Turn{Text: "done"},
	))
	if r := runFlower(t, dir, env, "once", "loosen the config"); r.code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "flower.yaml")); !strings.Contains(string(b), "off") {
		// The file tools refuse protected paths where the sandbox's mount
		// view is in place: the change then comes another way (a run
		// without the sandbox, a script), which must be confirmed alike.
		t.Logf("the model's Write was refused (%q); writing the change from outside", b)
		writeTestFile(t, filepath.Join(dir, "flower.yaml"), "sandbox: {mode: \"off\"}\n")
	}
	calls := len(srv.Requests())
	for _, args := range [][]string{{"once", "go on"}, {"--timeout", "0", "go on"}} {
		r := runFlower(t, dir, env, args...)
		line := strings.TrimSpace(r.stderr)
		if r.code != exitUsage || strings.Contains(line, "\n") || !strings.Contains(line, "flower.yaml changed") || !strings.Contains(line, "flower allow --workspace "+dir) {
			t.Errorf("flower %v after the change: exit %d, stderr %q; want one line naming flower.yaml and flower allow", args, r.code, r.stderr)
		}
	}
	if n := len(srv.Requests()); n != calls {
		t.Fatalf("a refused start called the model %d times", n-calls)
	}
	if r := runFlower(t, dir, env, "allow"); r.code != exitUsage || !strings.Contains(r.stderr, "needs a person at a terminal") {
		t.Errorf("flower allow without a terminal: exit %d\n%s", r.code, r.stderr)
	}

	allow := func(answer string) string {
		cmd := exec.Command(flowerBin, "allow")
		cmd.Dir = dir
		cmd.Env = append(baseEnv(dir), "TERM=dumb")
		tty, err := pty.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		out := &ptyOut{changed: make(chan struct{}, 1)}
		done := make(chan struct{})
		go func() { io.Copy(out, tty); close(done) }()
		out.waitFor(t, "Apply these changes? [y/N]")
		io.WriteString(tty, answer+"\n")
		cmd.Wait()
		tty.Close()
		<-done
		return out.String()
	}
	shown := allow("n")
	for _, want := range []string{"--- approved/flower.yaml", "+++ flower.yaml", `-  deny: ["Bash(touch:*)"]`, `+sandbox: {mode: "off"}`} {
		if !strings.Contains(shown, want) {
			t.Errorf("flower allow's diff lacks %q:\n%s", want, shown)
		}
	}
	if r := runFlower(t, dir, env, "once", "go on"); r.code != exitUsage {
		t.Errorf("after a no: exit %d, want the refusal\n%s", r.code, r.stderr)
	}
	if out := allow("y"); !strings.Contains(out, "approved flower.yaml") {
		t.Errorf("flower allow y:\n%s", out)
	}
	if r := runFlower(t, dir, env, "once", "go on"); r.code != 0 {
		t.Fatalf("after a yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "T")); err != nil {
		t.Error("the approved config (no deny rule) was not applied")
	}
}

// personApproves stands for a person's flower allow after a test edits
// its workspace's config between runs (TestAgentCannotChangeItsConfig
// runs the real one at a terminal): it forgets the approval, so the next
// start is a first start and approves what is there.
func personApproves(t *testing.T, ws string) {
	t.Helper()
	rd, err := flower.DefaultRunDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(stateRoot, "flower", "approved", filepath.Base(rd)+".json")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}
