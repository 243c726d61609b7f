package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/flower-run/flower/internal/proctest"
	"github.com/flower-run/flower/model/modeltest"
)

// asNobody are the tests of the real binary whose containment must also
// hold for an ordinary user (issue 20, "Done when"): TestAsNobody runs
// them again as uid 65534 when the suite runs as root.
var asNobody = []string{
	"TestAgentCannotChangeItsConfig",   // a model's Write of flower.yaml needs a person
	"TestAgentCannotRewriteItsConfig",  // Write/Bash of flower.yaml, the state dir, capabilities
	"TestBashCannotAddAnMCPServer",     // a missing .mcp.json that Bash creates
	"TestAgentCannotChangeUserConfig",  // ~/.config/flower where the workspace is ~
	"TestToolEnvironmentIsAnAllowList", // env shows no credential
	"TestRulesWithoutHoles",            // Grep hides a denied file; the eval forms are asked
	"TestContainmentThroughTheCLI",     // writes outside, /proc/*/environ, a setsid grandchild
	"TestKilledFlowerLeavesNoJob",      // the 7 kinds of background job after a SIGKILL
	"TestBashSeesOnlyItsProcesses",     // ls /proc
	"TestNoEscapeToTheTerminal",        // OSC 52 to /dev/tty
	"TestMovedProjectContinues",        // the project index and id file, a renamed project (issue 22)
	"TestCopiedProjectStartsAnew",      // a copy gets an id of its own
	"TestMCPTaskOutlivesClient",        // flower mcp: a task in a process of its own, found again
	"TestMCPTaskSurvivesKill",          // flower mcp and then the task SIGKILLed; the task continued
}

// TestAsNobody runs the containment tests of the real binary as uid
// 65534, on a workspace and a state dir that user owns, when the suite
// runs as root (in CI it must: proctest.AsNobody fails there rather than
// skip). Each test also runs as whoever runs the suite.
func TestAsNobody(t *testing.T) {
	proctest.AsNobody(t, "^("+strings.Join(asNobody, "|")+")$")
}

// TestKilledFlowerLeavesNoJob (issue 20): when flower is SIGKILLed during
// a Bash call that left every kind of background job, each of which would
// write once its sleep ends, every one of them dies and none writes.
func TestKilledFlowerLeavesNoJob(t *testing.T) {
	t.Parallel()
	proctest.NeedJobTools(t)
	dir := t.TempDir()
	marker := proctest.UniqueSleep()
	var lines []string
	for _, l := range proctest.AllJobs() {
		lines = append(lines, strings.ReplaceAll(l, "exec sleep M", "sleep M; echo late >> late"))
	}
	_, env := fakeModelWith(t, modeltest.Script(
		bashTurn(proctest.JobScript(lines, marker, "exec sleep "+marker)),
		modeltest.Turn{Text: "done"},
	))
	p := startFlower(t, dir, env, false, "once", "leave jobs behind")
	if !proctest.Poll(func() bool { return len(proctest.WithArg(marker)) == proctest.Kinds }) {
		t.Fatalf("%d of %d sleeps run\n%s\n%s", len(proctest.WithArg(marker)), proctest.Kinds, p.stdout, p.stderr)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.ended()
	if !proctest.Poll(func() bool { return len(proctest.WithArg(marker)) == 0 }) {
		t.Fatalf("processes outlived a SIGKILLed flower: %v", proctest.WithArg(marker))
	}
	if _, err := os.Stat(filepath.Join(dir, "late")); !os.IsNotExist(err) {
		t.Errorf("a job wrote after flower died (stat: %v)", err)
	}
}

// TestBashSeesOnlyItsProcesses (issue 20): ls /proc in Bash lists the
// command's own few processes: neither flower nor a process of the same
// user outside.
func TestBashSeesOnlyItsProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := proctest.UniqueSleep()
	sleep := exec.Command("sleep", outside)
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleep.Process.Kill(); _ = sleep.Wait() })
	srv, env := fakeModelWith(t, modeltest.Script(
		bashTurn(`ls /proc | grep -c '^[0-9]'; for d in /proc/[0-9]*; do tr '\0' ' ' < $d/cmdline; echo; done`),
		modeltest.Turn{Text: "done"},
	))
	if r := runFlower(t, dir, env, "once", "look around"); r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	rs := toolResults(reqs[len(reqs)-1])
	out := rs[len(rs)-1]
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || len(lines) > 5 || strings.Contains(out, outside) || strings.Contains(out, "look around") {
		t.Fatalf("Bash sees more than its own processes:\n%s", out)
	}
}

// TestNoEscapeToTheTerminal (issue 20): a model's Bash call that writes
// an OSC 52 (set the clipboard) to /dev/tty, with flower on a real
// terminal, never gets it to that terminal, and is told it failed.
func TestNoEscapeToTheTerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, env := fakeModelWith(t, modeltest.Script(
		bashTurn(`printf 'x\033]52;c;Zm9vYmFy\007y' > /dev/tty; echo "tty=$?"`),
		modeltest.Turn{Text: "done"},
	))
	cmd := exec.Command(flowerBin, "once", "write to the terminal")
	cmd.Dir = dir
	cmd.Env = append(append(baseEnv(dir), env...), "TERM=xterm")
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	out := &ptyOut{changed: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() { _, _ = io.Copy(out, tty); close(done) }()
	err = cmd.Wait()
	tty.Close()
	<-done
	if err != nil {
		t.Fatalf("flower once on a terminal: %v\n%s", err, out)
	}
	if strings.Contains(out.String(), "\x1b]52") {
		t.Errorf("the OSC 52 reached the terminal:\n%q", out)
	}
	reqs := srv.Requests()
	rs := toolResults(reqs[len(reqs)-1])
	if got := rs[len(rs)-1]; !strings.Contains(got, "tty=1") {
		t.Errorf("the write to /dev/tty did not fail: %q", got)
	}
}

// TestBashCannotAddAnMCPServer (issue 20, open item 1): where the
// workspace has no .mcp.json, one that Bash writes (to start a server of
// the model's at the next start) is gone when the call returns, the model
// is told, and the next start neither asks nor runs it.
func TestBashCannotAddAnMCPServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, env := fakeModelWith(t, modeltest.Script(
		bashTurn(`echo '{"mcpServers": {"x": {"command": "touch", "args": ["PWNED"]}}}' > .mcp.json; echo made`),
		modeltest.Turn{Text: "done"},
		modeltest.Turn{Text: "done"},
	))
	if r := runFlower(t, dir, env, "once", "add a server"); r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	rs := toolResults(reqs[len(reqs)-1])
	wantIn(t, "Bash .mcp.json", rs[len(rs)-1], "made", "flower removed .mcp.json")
	if _, err := os.Lstat(filepath.Join(dir, ".mcp.json")); !os.IsNotExist(err) {
		t.Fatalf(".mcp.json is in the workspace after the call (lstat: %v)", err)
	}
	if r := runFlower(t, dir, env, "once", "go on"); r.code != 0 {
		t.Fatalf("the next start: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); !os.IsNotExist(err) {
		t.Error("the model's MCP server ran at the next start")
	}
}

// TestAgentCannotChangeUserConfig (issue 20): where the workspace is the
// home directory, the person's config.yaml (which no confirmation
// covers) is refused to Write and read-only to Bash.
func TestAgentCannotChangeUserConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() // HOME too (baseEnv)
	user := filepath.Join(dir, ".config", "flower", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	const mine = "# the person's\n"
	writeTestFile(t, user, mine)
	srv, env := fakeModelWith(t, modeltest.Script(
		call("", "Write", map[string]any{"file_path": "~/.config/flower/config.yaml", "content": "sandbox: {mode: \"off\"}\n"}),
		bashTurn(`echo 'sandbox: {mode: "off"}' >> ~/.config/flower/config.yaml`),
		modeltest.Turn{Text: "done"},
	))
	if r := runFlower(t, dir, env, "once", "loosen the user config"); r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := readFile(t, user); got != mine {
		t.Errorf("config.yaml now holds %q", got)
	}
	results := callResults(t, srv.Requests(), 2)
	wantIn(t, "Write config.yaml", results[0], "protected configuration")
	wantIn(t, "Bash config.yaml", results[1], "Read-only file system")
}
