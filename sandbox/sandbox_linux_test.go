package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flower-run/flower/internal/proctest"
)

// newSandbox is a sandbox on a fresh workspace; it skips where Landlock is
// missing, except in CI, whose kernel has it.
func newSandbox(t *testing.T, cfg Config) *Sandbox {
	t.Helper()
	if landlockABI() == 0 && cfg.Mode != Off {
		if os.Getenv("CI") == "" {
			t.Skipf("no Landlock here (%s)", platform())
		}
		t.Fatalf("no Landlock in CI (%s)", platform())
	}
	if cfg.Workspace == "" {
		cfg.Workspace = t.TempDir()
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// run runs script with sh under s and returns its output and error.
func run(t *testing.T, s *Sandbox, script string) (string, error) {
	t.Helper()
	return runEnv(t, s, script, nil)
}

func runEnv(t *testing.T, s *Sandbox, script string, env []string) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := s.Start(&Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Env: env, Dir: s.cfg.Workspace, Stdout: w, Stderr: w})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	err = p.Wait()
	out, _ := io.ReadAll(r) // every writer is gone once Wait returns
	return string(out), err
}

// needNamespaces skips where namespaces cannot be made, unless the suite
// runs as uid 65534 (TestAsNobody), where they must work.
func needNamespaces(t *testing.T) {
	t.Helper()
	if err := namespaces().err; err != nil {
		if os.Getenv(proctest.NeedNamespaces) != "" {
			t.Fatalf("no namespaces as uid %d: %v", os.Getuid(), err)
		}
		t.Skipf("no namespaces here: %v", err)
	}
}

// both runs f with namespaces and in the subreaper fallback.
func both(t *testing.T, f func(t *testing.T)) {
	t.Run("namespaces", func(t *testing.T) {
		needNamespaces(t)
		f(t)
	})
	t.Run("subreaper", func(t *testing.T) {
		saved := namespaces()
		nsConf = nsConfig{err: errors.New("forced by the test")}
		t.Cleanup(func() { nsConf = saved })
		f(t)
	})
}

func TestWritesConfined(t *testing.T) {
	both(t, func(t *testing.T) {
		extra, outside := t.TempDir(), t.TempDir()
		s := newSandbox(t, Config{Writable: []string{extra}})
		out, err := run(t, s, fmt.Sprintf(`echo a > in; echo b > %s/x; echo c > "$TMPDIR/t"; echo d > %s/no; mkdir sub && mv in sub/; echo > /dev/null`,
			extra, outside))
		if err != nil {
			t.Logf("exit: %v", err)
		}
		for _, p := range []string{filepath.Join(s.cfg.Workspace, "sub", "in"), filepath.Join(extra, "x"), filepath.Join(s.TempDir(), "t")} {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s not written: %v\n%s", p, err, out)
			}
		}
		if _, err := os.Stat(filepath.Join(outside, "no")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("wrote outside the sandbox (stat: %v)", err)
		}
		if !strings.Contains(out, "Permission denied") {
			t.Errorf("output %q does not say Permission denied", out)
		}
	})
}

// TestParentEnvironUnreadable: nothing in the sandbox reads the parent's
// environment, even as root. The parent here is a child test process
// whose initial environment holds a secret it does not pass on (as flower
// scrubs its keys): its /proc/PID/environ would still show it. In the
// namespace, /proc has no such process. (Landlock alone does not refuse
// reading /proc/PID/environ of a process outside the sandbox on Linux
// 6.18, though it refuses ptrace, signals and /proc/PID/cwd: the
// namespace's /proc is what hides it.)
func TestParentEnvironUnreadable(t *testing.T) {
	needNamespaces(t)
	if os.Getenv("FLOWER_TEST_SECRET") != "" {
		s := newSandbox(t, Config{})
		script := "cat /proc/$PPID/environ; echo; for f in /proc/[0-9]*/environ; do cat $f; echo; done; echo END"
		env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "FLOWER_TEST_SECRET=") })
		out, _ := runEnv(t, s, script, env)
		fmt.Printf("pid %d: %s", os.Getpid(), out)
		return
	}
	c := exec.Command(os.Args[0], "-test.run=^TestParentEnvironUnreadable$", "-test.v")
	c.Env = append(os.Environ(), "FLOWER_TEST_SECRET=s3cr3t-value")
	out, err := c.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "END") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "s3cr3t-value") {
		t.Fatalf("the sandbox read the parent's environment:\n%s", out)
	}
}

// TestSetsidDiesWithCall: a process that left the group and the session
// is dead by the time the call returns.
func TestSetsidDiesWithCall(t *testing.T) {
	both(t, func(t *testing.T) {
		s := newSandbox(t, Config{Mode: Off})
		marker := uniqueSleep()
		out, err := run(t, s, fmt.Sprintf("setsid sh -c 'exec sleep %s' >/dev/null 2>&1 & sleep 0.01; echo started", marker))
		if err != nil || !strings.Contains(out, "started") {
			t.Fatalf("run: %v\n%s", err, out)
		}
		if pids := withArg(marker); len(pids) > 0 {
			t.Fatalf("setsid grandchild %v still runs after the call", pids)
		}
	})
}

func TestNetworkDenied(t *testing.T) {
	if landlockABI() < 4 {
		t.Skipf("Landlock ABI %d cannot restrict TCP", landlockABI())
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf(`exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d && echo connected'`, port)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, allow := range []bool{true, false} {
		s := newSandbox(t, Config{Network: allow})
		out, _ := run(t, s, script)
		if got := strings.Contains(out, "connected"); got != allow {
			t.Errorf("network %v: connected = %v; output %q", allow, got, out)
		}
	}
}

func TestRequiredWithoutLandlock(t *testing.T) {
	if landlockABI() != 0 {
		t.Skip("Landlock is available here")
	}
	if _, err := New(Config{Mode: Required, Workspace: t.TempDir()}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

func TestExitStatus(t *testing.T) {
	s := newSandbox(t, Config{Mode: Off})
	_, err := run(t, s, "exit 7")
	var ee *ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("err = %v, want exit status 7", err)
	}
}

// uniqueSleep is a sleep duration no other process uses.
var uniqueSleep = proctest.UniqueSleep

// withArg lists the live processes one of whose arguments is arg.
var withArg = proctest.WithArg

// TestSummaryIsTheSameInEveryProcess: the model reads the summary in
// Bash's description, at the head of every request; a TMPDIR path new in
// each process would break the prompt cache at every wake (issue 12).
func TestSummaryIsTheSameInEveryProcess(t *testing.T) {
	ws := t.TempDir()
	a, b := newSandbox(t, Config{Workspace: ws, Protect: Protected(ws, false)}), newSandbox(t, Config{Workspace: ws, Protect: Protected(ws, false)})
	sa, sb := a.Summary(), b.Summary()
	if sa != sb {
		t.Fatalf("two sandboxes of one workspace describe themselves differently:\n%s\n%s", sa, sb)
	}
	if strings.Contains(sa, a.tmp) || !strings.Contains(sa, "$TMPDIR") || !strings.Contains(sa, ws) || !strings.Contains(sa, "read-only, for a person to change: flower.yaml, .mcp.json") {
		t.Fatalf("summary %q: want the workspace and $TMPDIR, not %s", sa, a.tmp)
	}
}
