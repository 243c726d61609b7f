package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flower-run/flower/model/modeltest"
)

// flowerBin is the flower the tests run as a user would, as a real
// process: a link named flower to this test binary, which TestMain turns
// into flower. No second binary is compiled inside the tests' time limit
// (DESIGN.md §5): with -race that build alone took 14.6 minutes on 2 cores.
var flowerBin string

// asFlower, set in the environment, makes the test binary flower; flower's
// own children (the worker's drivers, flower mcp's serves) inherit it.
const asFlower = "FLOWER_TEST_AS_FLOWER"

func TestMain(m *testing.M) {
	if os.Getenv("FLOWER_HIDE_CHILD") == "1" { // TestHideEnviron's child is a test
		os.Exit(m.Run())
	}
	if filepath.Base(os.Args[0]) == "flower" || os.Getenv(asFlower) == "1" {
		os.Setenv(asFlower, "1")
		main()
		return
	}
	code, err := testAsFlower(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmd/flower tests:", err)
		code = 1
	}
	os.Exit(code)
}

// testAsFlower runs the tests with flowerBin linked to this binary.
func testAsFlower(m *testing.M) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("", "flower-bin")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	flowerBin = filepath.Join(dir, "flower")
	stateRoot = filepath.Join(dir, "state")
	if err := os.Symlink(exe, flowerBin); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// stateRoot is the XDG_STATE_HOME of every flower the tests run: no test
// writes to the real user's state directory.
var stateRoot string

// baseEnv is the environment every flower of the tests starts from: a
// home and a state directory of the test's own, and the run dir ./runs
// (seed 000's layout, which the tests inspect); a later entry of the same
// name overrides these (exec.Cmd keeps the last).
func baseEnv(dir string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_STATE_HOME=" + stateRoot, runDirEnv + "=runs"}
}

type ran struct {
	stdout, stderr string
	code           int
}

// runFlower runs the binary in dir with env added to a clean environment.
func runFlower(t *testing.T, dir string, env []string, args ...string) ran {
	t.Helper()
	cmd := exec.Command(flowerBin, args...)
	cmd.Dir = dir
	cmd.Env = append(baseEnv(dir), env...)
	return ranOf(t, cmd)
}

// ranOf runs cmd to its end and returns what it printed and its exit code.
func ranOf(t *testing.T, cmd *exec.Cmd) ran {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return ran{out.String(), errb.String(), code}
}

var sessionLine = regexp.MustCompile(`session ([0-9a-f-]{36}) · (\d+) turns`)

func TestOnceDemoAndResume(t *testing.T) { // issue 2: flower once, --resume, --model demo
	dir := t.TempDir()
	r := runFlower(t, dir, nil, "once", "--model", "demo", "say hello")
	if r.code != 0 || !strings.Contains(r.stdout, "[Write] hello.txt") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	m := sessionLine.FindStringSubmatch(r.stdout)
	if m == nil || m[2] != "4" {
		t.Fatalf("no session line with 4 turns in:\n%s", r.stdout)
	}
	r = runFlower(t, dir, nil, "once", "--model", "demo", "--resume", m[1], "second line")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "hello.txt"))
	if string(data) != "hello\nsecond line\n" {
		t.Fatalf("hello.txt = %q", data)
	}
	r = runFlower(t, dir, nil, "show", m[1])
	if r.code != 0 || !strings.Contains(r.stdout, "say hello") || !strings.Contains(r.stdout, "second line") {
		t.Fatalf("show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	fi, err := os.Stat(filepath.Join(dir, "runs", "sessions.db"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("sessions.db: %v %v", fi, err)
	}
}

func TestOnceAgainstFakeAnthropic(t *testing.T) { // R2.6: ANTHROPIC_BASE_URL honoured, key never stored
	srv := modeltest.NewAnthropic(modeltest.Script(
		modeltest.Turn{Text: "Writing.", ToolCalls: []modeltest.ToolCall{{Name: "Write", Input: `{"file_path":"a.txt","content":"A"}`}}},
		modeltest.Turn{Text: "All done."},
	))
	defer srv.Close()
	dir := t.TempDir()
	env := []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-secret-123"}
	r := runFlower(t, dir, env, "once", "write a.txt")
	if r.code != 0 || !strings.Contains(r.stdout, "All done.") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-secret-123" {
		t.Fatalf("Authorization = %q", got)
	}
	db, _ := os.ReadFile(filepath.Join(dir, "runs", "sessions.db"))
	wal, _ := os.ReadFile(filepath.Join(dir, "runs", "sessions.db-wal"))
	if bytes.Contains(db, []byte("sk-secret")) || bytes.Contains(wal, []byte("sk-secret")) {
		t.Fatal("the API key reached the store")
	}
}

func TestBadInputIsOneLine(t *testing.T) { // SPEC §7: one clear line, exit 2, no stack trace
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "bad"), 0o755)
	os.WriteFile(filepath.Join(dir, "bad", "sessions.db"), []byte("this is not sqlite at all, not even close....."), 0o644)
	tests := []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"no key", nil, []string{"once", "x"}, 2, "ANTHROPIC_API_KEY"},
		{"no openai key", nil, []string{"once", "--model", "gpt-4o", "x"}, 2, "OPENAI_API_KEY"},
		{"no prompt", nil, []string{"once", "--model", "demo"}, 2, "needs a PROMPT"},
		{"unknown flag", nil, []string{"once", "--nope", "x"}, 2, "unknown flag"},
		{"unknown session", nil, []string{"once", "--model", "demo", "--resume", "abc", "x"}, 2, "no session abc"},
		{"not a store", nil, []string{"once", "--model", "demo", "-r", "bad", "x"}, 1, "sessions.db"},
		{"show no store", nil, []string{"show", "-r", "none", "abc"}, 2, "no store"},
		{"show unknown", nil, []string{"show", "abc"}, 2, "no session abc"},
		// issue 10: limits that would silently do nothing
		{"max turns 0", nil, []string{"--model", "demo", "--max-turns", "0", "x"}, 2, "--max-turns 0"},
		{"budget NaN", nil, []string{"--model", "demo", "--budget", "NaN", "x"}, 2, "--budget NaN"},
		{"budget negative", nil, []string{"once", "--model", "demo", "--budget", "-1", "x"}, 2, "--budget -1"},
		{"rounds negative", nil, []string{"--model", "demo", "--rounds", "-5", "x"}, 2, "--rounds -5"},
		{"rounds -1", nil, []string{"--model", "demo", "--rounds", "-1", "x"}, 2, "--rounds -1"},
		{"budget, unknown prices", nil, []string{"--model", "openai/llama3.1", "--budget", "1", "x"}, 2, "prices of model \"llama3.1\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runFlower(t, dir, tt.env, tt.args...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != tt.code || len(lines) != 1 || !strings.Contains(r.stderr, tt.want) || strings.Contains(r.stderr, "goroutine") {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
		})
	}
}
