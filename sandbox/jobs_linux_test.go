package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/flower-run/flower/internal/proctest"
)

// runBash runs script with bash under s until it ends.
func runBash(t *testing.T, s *Sandbox, bash, script string) (string, error) {
	t.Helper()
	p, r := startBash(t, s, bash, script)
	err := p.Wait()
	out := make([]byte, 64<<10)
	n, _ := r.Read(out) // every writer is gone once Wait returns
	return string(out[:max(n, 0)]), err
}

// startBash starts script with bash under s; its output is on the pipe.
func startBash(t *testing.T, s *Sandbox, bash, script string) (*Process, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	p, err := s.Start(&Cmd{Path: bash, Args: []string{"bash", "-c", script}, Dir: s.cfg.Workspace, Stdout: w, Stderr: w})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return p, r
}

// TestBackgroundJobsDieWithCall: whatever way a command leaves a process
// behind, that process is dead by the time the call returns.
func TestBackgroundJobsDieWithCall(t *testing.T) {
	bash := proctest.NeedJobTools(t)
	both(t, func(t *testing.T) {
		s := newSandbox(t, Config{Mode: Off})
		for _, j := range proctest.Jobs {
			t.Run(j.Name, func(t *testing.T) {
				marker := uniqueSleep()
				out, err := runBash(t, s, bash, proctest.JobScript([]string{j.Line}, marker, "echo started"))
				if err != nil || !strings.Contains(out, "started") {
					t.Fatalf("run: %v\n%s", err, out)
				}
				if pids := withArg(marker); len(pids) > 0 {
					t.Fatalf("%s job %v still runs after the call", j.Name, pids)
				}
			})
		}
	})
}

// TestKillEndsEverything: Kill ends a running command and all its jobs;
// Wait returns the status of a SIGKILL.
func TestKillEndsEverything(t *testing.T) {
	bash := proctest.NeedJobTools(t)
	both(t, func(t *testing.T) {
		s := newSandbox(t, Config{Mode: Off})
		marker := uniqueSleep()
		p, _ := startBash(t, s, bash, proctest.JobScript(proctest.AllJobs(), marker, "exec sleep "+marker))
		eventually(t, "every kind's sleep runs", func() bool { return len(withArg(marker)) == proctest.Kinds })
		p.Kill()
		err := p.Wait()
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != 128+int(syscall.SIGKILL) {
			t.Errorf("Wait: %v, want exit status 137", err)
		}
		if pids := withArg(marker); len(pids) > 0 {
			t.Fatalf("%v still run after Kill and Wait", pids)
		}
	})
}

// TestCloseEndsEverything: closing the sandbox ends the commands still
// running in it (background shells), and all they started.
func TestCloseEndsEverything(t *testing.T) {
	bash := proctest.NeedJobTools(t)
	needNamespaces(t)
	s := newSandbox(t, Config{Mode: Off})
	marker := uniqueSleep()
	p, _ := startBash(t, s, bash, proctest.JobScript(proctest.AllJobs(), marker, "exec sleep "+marker))
	eventually(t, "every kind's sleep runs", func() bool { return len(withArg(marker)) == proctest.Kinds })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if pids := withArg(marker); len(pids) > 0 {
		t.Fatalf("%v still run after Close", pids)
	}
	if err := p.Wait(); err == nil {
		t.Fatal("Wait: nil error for a command ended by Close")
	}
}

// Variables of TestParentProcess, the "flower" that TestDiesWithParent kills.
const (
	parentEnv   = "FLOWER_SANDBOX_TEST_PARENT"    // the marker
	parentWSEnv = "FLOWER_SANDBOX_TEST_PARENT_WS" // the workspace
	parentNoNS  = "FLOWER_SANDBOX_TEST_PARENT_NONS"
)

// TestParentProcess is not a test: it is the body of the process that
// TestDiesWithParent SIGKILLs while it runs a command holding every kind
// of background job.
func TestParentProcess(t *testing.T) {
	marker := os.Getenv(parentEnv)
	if marker == "" {
		t.Skip("the parent process of TestDiesWithParent")
	}
	if os.Getenv(parentNoNS) != "" {
		nsConf = nsConfig{err: errors.New("forced by the test")}
		nsOnce.Do(func() {})
	}
	// Landlock as flower applies it: with signal scoping, the subreaper
	// could not kill what it started when flower died (issue 20).
	s, err := New(Config{Mode: Auto, Workspace: os.Getenv(parentWSEnv)})
	if err != nil {
		t.Fatal(err)
	}
	// As flower is: not dumpable from the moment it holds its secrets,
	// before its first Bash call starts the helper (issue 20).
	_ = Harden(nil)
	bash, _ := exec.LookPath("bash")
	p, _ := startBash(t, s, bash, proctest.JobScript(proctest.AllJobs(), marker, "exec sleep "+marker))
	fmt.Println("parent: command ended", p.Wait()) // only if the kill failed
	os.Exit(1)
}

// TestDiesWithParent: when the process holding the sandbox (flower) is
// SIGKILLed mid-command, every process of the command dies, all kinds of
// background job included.
func TestDiesWithParent(t *testing.T) {
	proctest.NeedJobTools(t)
	for _, ns := range []bool{true, false} {
		t.Run(map[bool]string{true: "namespaces", false: "subreaper"}[ns], func(t *testing.T) {
			if ns {
				needNamespaces(t)
			}
			ws := t.TempDir()
			marker := uniqueSleep()
			c := exec.Command(os.Args[0], "-test.run=^TestParentProcess$")
			c.Env = append(os.Environ(), parentEnv+"="+marker, parentWSEnv+"="+ws)
			if !ns {
				c.Env = append(c.Env, parentNoNS+"=1")
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
			eventually(t, "every kind's sleep runs", func() bool { return len(withArg(marker)) == proctest.Kinds })
			if err := c.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = c.Wait()
			eventually(t, "every sleep is dead", func() bool { return len(withArg(marker)) == 0 })
		})
	}
}

// TestOwnProcessesOnly: a command sees in /proc only its own processes:
// not flower's, not the host's, not another command's of the same run.
func TestOwnProcessesOnly(t *testing.T) {
	bash := proctest.NeedJobTools(t)
	needNamespaces(t)
	s := newSandbox(t, Config{Mode: Off})
	other := uniqueSleep()
	p, _ := startBash(t, s, bash, "exec sleep "+other)
	defer p.Wait()
	defer p.Kill()
	eventually(t, "the other command runs", func() bool { return len(withArg(other)) == 1 })
	out, err := run(t, s, `for d in /proc/[0-9]*; do printf '%s: ' "${d#/proc/}"; tr '\0' ' ' < $d/cmdline; echo; done`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if strings.Contains(out, other) || strings.Contains(out, os.Args[0]) || len(lines) > 4 || !strings.HasPrefix(out, "1: ") {
		t.Fatalf("the command sees more than its own processes:\n%s", out)
	}
}

// TestOneHelperPerSandbox: the helper (this program started again) is
// started once per sandbox, not once per command (issue 19), also when
// commands start concurrently.
func TestOneHelperPerSandbox(t *testing.T) {
	needNamespaces(t)
	before := helperStarts.Load()
	s := newSandbox(t, Config{})
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = run(t, s, fmt.Sprintf("echo %d > f%d && cat f%d", i, i, i))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := run(t, s, "true"); err != nil {
			t.Fatal(err)
		}
	}
	if got := helperStarts.Load() - before; got != 1 {
		t.Fatalf("%d helpers started for 11 commands of one sandbox, want 1", got)
	}
	w := s.Widen(t.TempDir())
	if _, err := run(t, w, "true"); err != nil {
		t.Fatal(err)
	}
	if got := helperStarts.Load() - before; got != 1 {
		t.Fatalf("a widened copy started a helper of its own (%d in all)", got)
	}
	if _, err := run(t, newSandbox(t, Config{}), "true"); err != nil {
		t.Fatal(err)
	}
	if got := helperStarts.Load() - before; got != 2 {
		t.Fatalf("%d helpers for two sandboxes, want 2", got)
	}
}

// TestStartError: a command that cannot be exec'd is Start's error, and
// the helper goes on serving.
func TestStartError(t *testing.T) {
	needNamespaces(t)
	s := newSandbox(t, Config{Mode: Off})
	_, err := s.Start(&Cmd{Path: "/nonexistent/prog", Args: []string{"prog"}})
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("Start: %v, want no such file", err)
	}
	if out, err := run(t, s, "echo ok"); err != nil || out != "ok\n" {
		t.Fatalf("after a failed start: %q, %v", out, err)
	}
}

// TestAsNobody runs this package's tests as uid 65534 when run as root.
func TestAsNobody(t *testing.T) {
	proctest.AsNobody(t, ".")
}

// eventually waits until cond holds, polling (no fixed sleeps).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !proctest.Poll(cond) {
		t.Fatalf("timed out waiting until %s", what)
	}
}

// TestManyCommandsAtOnce: the run's helper starts commands side by side,
// each from an init that shares the helper's memory on amd64 (issue 19):
// every command runs its own script, with its own status, while the
// helper's runtime goes on allocating for the others.
func TestManyCommandsAtOnce(t *testing.T) {
	needNamespaces(t)
	s := newSandbox(t, Config{Mode: Auto})
	const callers, each = 16, 8
	var wg sync.WaitGroup
	errs := make(chan error, callers*each)
	for c := range callers {
		wg.Go(func() {
			for i := range each {
				n := c*each + i
				out, err := run(t, s, fmt.Sprintf("echo %d; exit %d", n, n%7))
				var ee *ExitError
				switch {
				case n%7 == 0 && err != nil, n%7 != 0 && (!errors.As(err, &ee) || ee.ExitCode() != n%7):
					errs <- fmt.Errorf("command %d: err = %v, want exit status %d", n, err, n%7)
				case out != fmt.Sprintln(n):
					errs <- fmt.Errorf("command %d printed %q", n, out)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestCommandSignals: a command starts with no signal blocked, as after
// a plain exec: the init that starts it runs with every signal blocked
// and, on amd64, with the runtime's handlers in the helper's memory, which
// the command resets before its exec. (cat, not sh: a shell clears its
// mask itself.)
func TestCommandSignals(t *testing.T) {
	needNamespaces(t)
	s := newSandbox(t, Config{Mode: Auto})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := s.Start(&Cmd{Path: "/bin/cat", Args: []string{"cat", "/proc/self/status"}, Stdout: w, Stderr: w})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	err = p.Wait()
	out, _ := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	blocked := ""
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "SigBlk:"); ok {
			blocked = strings.TrimSpace(v)
		}
	}
	if blocked == "" || strings.Trim(blocked, "0") != "" {
		t.Errorf("SigBlk: %q, want none blocked", blocked)
	}
}
