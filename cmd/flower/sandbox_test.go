package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/internal/proctest"
	"github.com/flower-run/flower/model/modeltest"
)

// secretKey is the API key the fake model accepts: long enough that no
// tool output holds it by chance.
const secretKey = "sk-ant-test-4f9d2c7e1b8a6350-secret"

func bashTurn(command string) modeltest.Turn {
	return call("", "Bash", map[string]any{"command": command})
}

// gitRepo makes dir a git repository with one commit and a bare remote,
// and returns the remote's path.
func gitRepo(t *testing.T, dir string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is missing in CI")
		}
		t.Skip("no git")
	}
	remote := filepath.Join(t.TempDir(), "remote.git")
	for _, args := range [][]string{{"init", "-q", "--bare", remote}, {"init", "-q", dir},
		{"-C", dir, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "one"},
		{"-C", dir, "remote", "add", "origin", remote}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return remote
}

// TestContainmentThroughTheCLI: a fake model asks flower once for each
// harmful call (issue 10). A deny rule stops git push; an ask rule with no
// one to answer denies; under the sandbox, a write outside the workspace
// fails; no process the agent starts reads flower's environment; a setsid
// grandchild is dead when its call ends.
func TestContainmentThroughTheCLI(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux's")
	}
	dir := t.TempDir()
	remote := gitRepo(t, dir)
	outside := t.TempDir()
	marker := fmt.Sprintf("%d.%d", 2000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	writeTestFile(t, filepath.Join(dir, "flower.yaml"), "permissions:\n  ask: [\"Bash(npm publish:*)\"]\n  deny: [\"Bash(git push:*)\"]\n")
	srv, env := fakeModelWith(t, modeltest.Script(
		bashTurn("git status >/dev/null && git push origin HEAD:main"),
		bashTurn("npm publish"),
		bashTurn("echo x > "+filepath.Join(outside, "escaped")+"; echo in > inside"),
		bashTurn("cat /proc/$PPID/environ; for f in /proc/[0-9]*/environ; do cat $f; echo; done; env"),
		bashTurn("setsid sh -c 'sleep "+marker+"; echo late > late' >/dev/null 2>&1 & echo started"),
		modeltest.Turn{Text: "done"},
	))
	env = append(env[:1], "ANTHROPIC_API_KEY="+secretKey)
	r := runFlower(t, dir, env, "once", "try harmful things")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if pids := proctest.WithArg(marker); len(pids) > 0 {
		t.Errorf("the setsid grandchild outlived its call: %v", pids)
	}
	reqs := srv.Requests()
	results := callResults(t, reqs, 5)
	wantIn(t, "git push", results[0], "deny rule Bash(git push:*) in flower.yaml")
	if out, _ := exec.Command("git", "-C", remote, "rev-parse", "--verify", "-q", "main").CombinedOutput(); len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("git push reached the remote: %s", out)
	}
	wantIn(t, "npm publish", results[1], "ask rule Bash(npm publish:*)", "there is no one to ask")
	wantIn(t, "write outside", results[2], "Permission denied")
	if _, err := os.Stat(filepath.Join(outside, "escaped")); !os.IsNotExist(err) {
		t.Errorf("Bash wrote outside the workspace (stat: %v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "inside")); err != nil {
		t.Errorf("Bash could not write the workspace: %v", err)
	}
	for i, req := range reqs {
		if bytes.Contains(req.Body, []byte(secretKey)) {
			t.Errorf("request %d carries the API key", i)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "late")); !os.IsNotExist(err) {
		t.Errorf("the grandchild wrote after its call (stat: %v)", err)
	}
}

// TestSetsidDiesWithKilledFlower: a setsid grandchild of a Bash call dies
// when flower is SIGKILLed in the middle of the call, and writes nothing.
func TestSetsidDiesWithKilledFlower(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("PID namespaces are Linux's")
	}
	dir := t.TempDir()
	marker := fmt.Sprintf("%d.%d", 3000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	_, env := fakeModelWith(t, modeltest.Script(
		bashTurn("setsid sh -c 'sleep "+marker+"; echo late > late' >/dev/null 2>&1 & sleep "+marker),
		modeltest.Turn{Text: "done"},
	))
	p := startFlower(t, dir, env, false, "once", "start a daemon")
	deadline := time.Now().Add(guard)
	for len(proctest.WithArg(marker)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the sleeps never started\n%s\n%s", p.stdout, p.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.ended()
	for len(proctest.WithArg(marker)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes outlived a SIGKILLed flower: %v", proctest.WithArg(marker))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, "late")); !os.IsNotExist(err) {
		t.Errorf("the grandchild wrote after flower died (stat: %v)", err)
	}
}

// callResults are the results of the n calls of a script that makes one
// call per turn. Each request after the first answers one call; the view
// drops old denials (R4.5), so each result is read from the request right
// after its call.
func callResults(t *testing.T, reqs []*modeltest.Request, n int) []string {
	t.Helper()
	var results []string
	for _, req := range reqs[1:] {
		rs := toolResults(req)
		results = append(results, rs[len(rs)-1])
	}
	if len(results) != n {
		t.Fatalf("%d tool results, want %d: %q", len(results), n, results)
	}
	return results
}

func wantIn(t *testing.T, what, got string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(got, p) {
			t.Errorf("%s: result %q lacks %q", what, got, p)
		}
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAskRuleAsksThePerson: in an attended wake, a call an ask rule
// matches waits for the person's answer, typed as an option's number.
func TestAskRuleAsksThePerson(t *testing.T) {
	t.Parallel()
	_, env := fakeModel(t)
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "flower.yaml"), "permissions:\n  ask: [\"Write(out.txt)\"]\n")
	p := startFlower(t, dir, env, true, testTask)
	p.waitOutput("? " + askQuestion)
	if _, err := io.WriteString(p.stdin, "1\n"); err != nil {
		t.Fatal(err)
	}
	p.waitOutput("? Allow this Write call: out.txt  (ask rule Write(out.txt) in flower.yaml)")
	if _, err := io.WriteString(p.stdin, "1\n"); err != nil { // allow once
		t.Fatal(err)
	}
	r := p.wait()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := readFile(t, filepath.Join(dir, "out.txt")); got != "hi\n" {
		t.Errorf("out.txt = %q after the person allowed the Write", got)
	}
}
