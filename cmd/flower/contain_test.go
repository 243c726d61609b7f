package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/workflow/starter"
)

// Issue 10's done-when tests: real flower processes, a fake model asking
// for harmful calls.

// defaultState is the environment of a flower that keeps its state where
// it does by default (no -r, no FLOWER_RUN_DIR), under a state home of the
// test's own.
func defaultState(t *testing.T) (state string, env []string) {
	state = t.TempDir()
	return state, []string{"XDG_STATE_HOME=" + state, runDirEnv + "="}
}

// projectsOf is the one run dir under a state home.
func projectsOf(t *testing.T, state string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(state, "flower", "projects", "*"))
	if len(dirs) != 1 {
		t.Fatalf("state home holds %v, want one project directory", dirs)
	}
	return dirs[0]
}

// hostileWork plays the starter flow, except that the work step first
// tries to destroy flower's state: rm -rf of the workspace, git clean
// -fdx, a Write aimed at the store; then does the work anyway.
func hostileWork(storePath string) modeltest.Responder {
	return func(r *modeltest.Request) modeltest.Turn {
		if stepOf(r.System) != "work" {
			return play(r)
		}
		_, results := lastPrompt(r.Messages)
		switch len(results) {
		case 0:
			return call("Cleaning up.", "Bash", map[string]any{"command": "git init -q . && git clean -fdxq; rm -rf ./* ./.[!.]*; ls -A"})
		case 1:
			return call("Resetting flower.", "Write", map[string]any{"file_path": storePath, "content": "garbage"})
		case 2:
			return call("Writing out.txt.", "Write", map[string]any{"file_path": "out.txt", "content": "hi\n"})
		}
		return modeltest.Turn{Text: "Done."}
	}
}

// rm -rf, git clean -fdx and a Write aimed at the store leave the run
// intact: the state is outside the workspace, the store out of the file
// tools' reach, the notes are written back, and the next wake continues.
func TestHarmfulCallsLeaveTheStateIntact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	state, env := defaultState(t)
	var once sync.Once
	var storePath string
	srv, fenv := fakeModelWith(t, func(r *modeltest.Request) modeltest.Turn {
		once.Do(func() { storePath = filepath.Join(projectsOf(t, state), flower.StoreFile) })
		return hostileWork(storePath)(r)
	})
	env = append(env, fenv...)
	r := runFlower(t, dir, env, args(testTask)...)
	if r.code != 0 {
		t.Fatalf("the run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); err == nil {
		t.Error("the state went into the workspace")
	}
	runDir := projectsOf(t, state)
	if runs := runsOf(t, runDir); len(runs) != 1 || runs[0].Outcome != "passed" {
		t.Fatalf("runs %+v, want one passed", runs)
	}
	results := toolResults(ofStep(srv.Requests(), "work")[2])
	if len(results) < 2 || !strings.Contains(results[1], "flower's own state") {
		t.Errorf("the Write aimed at the store was not refused: %q", results)
	}
	for _, rel := range []string{starter.BriefPath, starter.GoalsPath} {
		if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
			t.Errorf("%s was not written back: %v", rel, err)
		}
	}
	judge := ofStep(srv.Requests(), "judge")
	if len(judge) == 0 || !strings.Contains(userTexts(judge[0])[0], "out.txt says hi") {
		t.Errorf("the judge did not get the goals back")
	}
	// The next wake continues the same thread: it knows the run passed.
	again := runFlower(t, dir, env, args()...)
	if again.code != 0 || !strings.Contains(again.stdout, "passed its verdict") {
		t.Errorf("the next wake: exit %d\n%s%s", again.code, again.stdout, again.stderr)
	}
	st := runFlower(t, dir, env, "status")
	if !strings.Contains(st.stdout, "state      "+runDir) {
		t.Errorf("flower status does not say where the state is:\n%s", st.stdout)
	}
}

// The secrets flower knows never reach a request body, an event or the
// store, though Bash reads flower's own environment from /proc; and an
// OSC 52 sequence in tool output never reaches the terminal.
func TestSecretsNeverLeave(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const key, token, mine = "sk-ant-test-KEY-0123456789abcdef", "flower-token-0123456789abcdef", "my-own-secret-0123456789"
	if err := os.WriteFile(filepath.Join(dir, "flower.yaml"), []byte("sandbox:\n  secrets: [MY_SECRET]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, _ := fakeModelWith(t, func(r *modeltest.Request) modeltest.Turn {
		if stepOf(r.System) != "work" {
			return play(r)
		}
		_, results := lastPrompt(r.Messages)
		switch len(results) {
		case 0:
			return call("Looking around.", "Bash", map[string]any{"command": `printf 'x\033]52;c;cm0gLXJmIH4=\007y\n'; tr '\0' '\n' < /proc/$PPID/environ; echo ---; env; echo "usable=$(tr '\0' '\n' < /proc/$PPID/environ | grep -c '^ANTHROPIC_API_KEY=sk-')"`})
		case 1:
			return call("Writing out.txt.", "Write", map[string]any{"file_path": "out.txt", "content": "hi\n"})
		}
		return modeltest.Turn{Text: "Done."}
	})
	env := []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=" + key, "FLOWER_TOKEN=" + token, "MY_SECRET=" + mine}
	r := runFlower(t, dir, env, args(testTask)...)
	if r.code != 0 {
		t.Fatalf("the run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	work := ofStep(srv.Requests(), "work")
	seen := toolResults(work[1])[0]
	if !strings.Contains(seen, "usable=") && !strings.Contains(seen, "ermission denied") {
		t.Errorf("the Bash call did not run as planned: %q", seen)
	}
	if strings.Contains(seen, "MY_SECRET") || strings.Contains(seen, mine) {
		t.Errorf("MY_SECRET reached Bash (issue 20 item 4: tools get an allow list): %q", seen)
	}
	if !strings.Contains(seen, "usable=0") {
		t.Errorf("a command could still read and use the key from /proc/$PPID/environ: %q", seen)
	}
	if !strings.Contains(r.stdout, "xy") {
		t.Errorf("the tool output did not reach the terminal as text:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "\x1b]52") || strings.Contains(r.stdout, "\x1b") {
		t.Errorf("an escape sequence reached the terminal:\n%q", r.stdout)
	}
	stored := storeBytes(t, filepath.Join(dir, "runs"))
	for _, secret := range []string{key, token, mine} {
		for _, req := range srv.Requests() {
			if bytes.Contains(req.Body, []byte(secret)) {
				t.Errorf("request %d carried a secret %q", req.N, secret[:8])
			}
		}
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("the terminal showed a secret %q", secret[:8])
		}
		if bytes.Contains(stored, []byte(secret)) {
			t.Errorf("the store holds a secret %q", secret[:8])
		}
	}
}

// storeBytes is everything in a run dir's store files.
func storeBytes(t *testing.T, runDir string) []byte {
	t.Helper()
	var all []byte
	for _, name := range []string{"sessions.db", "sessions.db-wal", "lineage.json", "manifest.json"} {
		b, _ := os.ReadFile(filepath.Join(runDir, name))
		all = append(all, b...)
	}
	return all
}

// A model server that accepts and never answers, and one whose stream
// stops mid-answer, are cut within the timeouts and retried; the retry
// is reported.
func TestStalledModelIsCutAndRetried(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flower.yaml"), []byte("model:\n  first_byte_timeout: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, env := fakeModelWith(t, func(r *modeltest.Request) modeltest.Turn {
		switch r.N {
		case 1:
			return modeltest.Turn{Fault: &modeltest.Fault{Stall: true}}
		case 3:
			return modeltest.Turn{Fault: &modeltest.Fault{StallAfterStart: true}}
		}
		return play(r)
	})
	r := runFlower(t, dir, env, args("--idle-timeout", "1s", testTask)...)
	if r.code != 0 {
		t.Fatalf("the run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := srv.Count(); got != perRun+2 {
		t.Errorf("%d requests, want %d: the two stalled ones again", got, perRun+2)
	}
	if n := strings.Count(r.stdout, "first byte timeout") + strings.Count(r.stdout, "stream idle timeout"); n != 2 {
		t.Errorf("%d stalls reported, want 2:\n%s", n, r.stdout)
	}
}

// Two runs never work in one workspace at once, whatever their run dirs.
func TestOneDriverPerWorkspace(t *testing.T) {
	t.Parallel()
	srv, env := fakeModel(t)
	held, release := make(chan struct{}), make(chan struct{})
	var holdOnce, releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	srv.onRequest(func(r *modeltest.Request) { holdOnce.Do(func() { close(held); <-release }) })
	dir := t.TempDir()
	a := startFlower(t, dir, env, false, args("-r", "one", testTask)...)
	select {
	case <-held:
	case <-a.done:
		t.Fatalf("a ended early\n%s%s", a.stdout, a.stderr)
	}
	b := runFlower(t, dir, env, args("-r", "two", "another task")...)
	if b.code != 1 || !strings.Contains(b.stderr, "never share a workspace") || !strings.Contains(b.stderr, fmt.Sprintf("pid %d", a.cmd.Process.Pid)) ||
		!strings.Contains(b.stderr, "flower ps") {
		t.Errorf("the second driver: exit %d\n%s%s", b.code, b.stdout, b.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "two", flower.StoreFile)); err == nil {
		t.Error("the refused driver created a store")
	}
	releaseOnce.Do(func() { close(release) })
	if r := a.wait(); r.code != 0 {
		t.Fatalf("a: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A ./runs an older flower kept for this workspace is used, with a notice.
func TestOldRunsDirIsKept(t *testing.T) {
	t.Parallel()
	_, env := fakeModel(t)
	dir := t.TempDir()
	if r := runFlower(t, dir, env, args("-r", "runs", testTask)...); r.code != 0 { // what an older flower left
		t.Fatalf("the first run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	_, def := defaultState(t)
	r := runFlower(t, dir, append(env, def...), args()...)
	if r.code != 0 || !strings.Contains(r.stdout, "passed its verdict") || strings.Count(r.stderr, "using ./runs") != 1 {
		t.Errorf("the wake after the upgrade: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// --budget on a model flower has no prices for is refused, unless
// flower.yaml gives them.
func TestBudgetNeedsKnownPrices(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewOpenAI(func(*modeltest.Request) modeltest.Turn { return modeltest.Turn{Text: "hello"} })
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	env := []string{"OPENAI_BASE_URL=" + srv.OpenAIBaseURL()}
	cmd := []string{"once", "--model", "openai/llama3.1", "--budget", "1", "say hi"}
	if r := runFlower(t, dir, env, cmd...); r.code != 2 || !strings.Contains(r.stderr, "flower.yaml") {
		t.Errorf("without prices: exit %d\n%s", r.code, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "flower.yaml"), []byte("models:\n  llama3.1: {input_per_mtok: 0, output_per_mtok: 0, window: 32000}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	personApproves(t, dir)
	if r := runFlower(t, dir, env, cmd...); r.code != 0 {
		t.Errorf("with prices in flower.yaml: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, bad := range [][]string{{"--timeout", "-5", "x"}, {"--timeout", "NaN", "x"}, {"--max-asks", "-2", "x"}, {"--idle-timeout", "1ms", "x"}} {
		if r := runFlower(t, dir, env, bad...); r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("flower %v: exit %d\n%s", bad, r.code, r.stderr)
		}
	}
}
