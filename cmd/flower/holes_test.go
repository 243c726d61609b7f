package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/model/modeltest"
)

// TestRulesWithoutHoles (issue 20 item 5; R9.3), as a hostile model
// would try them on a real flower once: with Bash(echo:*) allowed, the
// arithmetic and ${x@P} forms that run a command are asked (denied: no one
// to ask) and run nothing; Grep over the workspace never prints a file
// Read(.env) denies; Read ~/.ssh/id_rsa meets Read(~/.ssh/**).
func TestRulesWithoutHoles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "flower.yaml"), "permissions:\n  allow: [\"Bash(echo:*)\"]\n  deny: [\"Read(.env)\", \"Read(~/.ssh/**)\"]\n")
	writeTestFile(t, filepath.Join(dir, ".env"), "API_KEY=hunter2-in-dotenv\n")
	writeTestFile(t, filepath.Join(dir, "notes.txt"), "hunter2 is the example password\n")
	if err := os.Mkdir(filepath.Join(dir, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, ".ssh", "id_rsa"), "PRIVATE KEY\n") // HOME is dir
	srv, env := fakeModelWith(t, modeltest.Script(
		bashTurn(`x='a[$(touch P1)]'; echo $((x))`),
		bashTurn(`x='$(touch P2)'; echo ${x@P}`),
		bashTurn(`echo ok > P3`),
		call("", "Grep", map[string]any{"pattern": "hunter2", "output_mode": "content"}),
		call("", "Read", map[string]any{"file_path": "~/.ssh/id_rsa"}),
		modeltest.Turn{Text: "done"},
	))
	r := runFlower(t, dir, env, "once", "try the rules")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for name, want := range map[string]bool{"P1": false, "P2": false, "P3": true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", name, err == nil, want)
		}
	}
	reqs := srv.Requests()
	rs := toolResults(reqs[len(reqs)-1])
	if len(rs) < 5 {
		t.Fatalf("tool results %q", rs)
	}
	rs = rs[len(rs)-5:]
	wantIn(t, "echo $((x))", rs[0], "cannot be checked against the rules", "arithmetic on a variable", "there is no one to ask")
	wantIn(t, "echo ${x@P}", rs[1], "cannot be checked against the rules", "${x@...}")
	wantIn(t, "Grep", rs[3], "notes.txt:1:hunter2")
	if strings.Contains(rs[3], ".env") || strings.Contains(rs[3], "in-dotenv") {
		t.Errorf("Grep printed the denied .env:\n%s", rs[3])
	}
	wantIn(t, "Read ~/.ssh/id_rsa", rs[4], "Read(~/.ssh/**)")
	if strings.Contains(rs[4], "PRIVATE") {
		t.Errorf("Read ~/.ssh/id_rsa read it:\n%s", rs[4])
	}
}

// TestToolEnvironmentIsAnAllowList (issue 20 item 4): env in Bash, on a
// real flower once, shows none of the credentials a person exported, nor
// flower's settings, but what flower.yaml's env names; a credential's
// value that reaches a result another way is scrubbed.
func TestToolEnvironmentIsAnAllowList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "flower.yaml"), "env:\n  allow: [GOFLAGS]\n  set: {NODE_ENV: test}\n")
	writeTestFile(t, filepath.Join(dir, "leak.txt"), "ghp_leakedTokenValue123\n")
	srv, env := fakeModelWith(t, modeltest.Script(
		bashTurn("env; cat leak.txt"),
		modeltest.Turn{Text: "done"},
	))
	env = append(env, "DATABASE_URL=postgres://app:dbpw-secret-1@db.example/app", "GITHUB_TOKEN=ghp_leakedTokenValue123",
		"MY_SERVICE_PASSWORD=svc-secret-42", "FLOWER_HARMLESS=flower-setting", "GOFLAGS=-mod=mod", "UNLISTED=plain")
	r := runFlower(t, dir, env, "once", "show the environment")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	rs := toolResults(reqs[len(reqs)-1])
	out := rs[len(rs)-1]
	wantIn(t, "env", out, "GOFLAGS=-mod=mod", "NODE_ENV=test", "PATH=", "[redacted]")
	for _, leak := range []string{"DATABASE_URL", "dbpw-secret", "GITHUB_TOKEN", "ghp_", "MY_SERVICE_PASSWORD", "svc-secret", "FLOWER_", "ANTHROPIC", "UNLISTED"} {
		if strings.Contains(out, leak) {
			t.Errorf("Bash's env shows %s:\n%s", leak, out)
		}
	}
}

// TestSubmitRefusesBadWorkspaces (issue 20 item 6): flower submit refuses
// /, the state directory and a missing directory with one line, before it
// touches the database (none listens here), and creates nothing.
func TestSubmitRefusesBadWorkspaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(filepath.Join(state, "flower", "projects"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_STATE_HOME=" + state, "FLOWER_STORE=postgres://nobody@127.0.0.1:1/none"}
	for ws, want := range map[string]string{
		"/":                               "the filesystem root",
		filepath.Join(state, "flower"):    "flower's state directory",
		filepath.Join(dir, "nonexistent"): "not a directory",
	} {
		r := runFlower(t, dir, env, "submit", "--workspace", ws, "do it")
		line := strings.TrimSpace(r.stderr)
		if r.code != exitUsage || !strings.Contains(line, want) || strings.Contains(line, "\n") {
			t.Errorf("submit --workspace %s: exit %d, stderr %q; want usage and one line with %q", ws, r.code, r.stderr, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nonexistent")); err == nil {
		t.Error("submit created the missing workspace")
	}
}
