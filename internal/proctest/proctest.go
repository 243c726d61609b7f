// Package proctest finds processes from outside for tests that check what
// a tool, a sandbox or flower left running (R9.4): by an argument, since
// a process in a PID namespace has another pid inside.
package proctest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// WithArg lists the live processes one of whose arguments is arg (none
// where there is no /proc).
func WithArg(arg string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue // gone, or a zombie
		}
		for _, a := range bytes.Split(b, []byte{0}) {
			if string(a) == arg {
				out = append(out, pid)
			}
		}
	}
	return out
}

// NeedNamespaces is set by AsNobody in the suite it runs: a test that
// would skip for want of namespaces fails instead.
const NeedNamespaces = "FLOWER_TEST_NEED_NAMESPACES"

// AsNobody runs this test binary again as user and group 65534 (setpriv),
// with the tests that match run, and fails with their output if they
// fail: containment must hold for an unprivileged user too, not only for
// root (DESIGN §5). It skips when not root, and when setpriv, or user
// namespaces for that user (unshare -U -p -f --mount-proc), are missing.
func AsNobody(t *testing.T, run string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: this suite already runs as an unprivileged user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		skipUnlessCI(t, "no setpriv here to run the suite as uid 65534")
	}
	nobody := []string{"--reuid=65534", "--regid=65534", "--clear-groups"}
	if out, err := exec.Command(setpriv, append(nobody, "unshare", "-U", "-p", "-f", "--mount-proc", "true")...).CombinedOutput(); err != nil {
		skipUnlessCI(t, fmt.Sprintf("uid 65534 cannot make namespaces here (unshare -U -p -f --mount-proc true: %v %s)", err, bytes.TrimSpace(out)))
	}
	// The binary and the temp dirs, where that user can read and write.
	dir, err := os.MkdirTemp("", "flower-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	bin := filepath.Join(dir, "test.bin")
	if err := copyFile(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(setpriv, append(nobody, bin, "-test.run="+run, "-test.count=1", "-test.v")...)
	c.Env = append(os.Environ(), "TMPDIR="+dir, "HOME="+dir, NeedNamespaces+"=1")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("as uid 65534: %v\n%s", err, out)
	}
	var pass, skip int
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		pass += strings.Count(l[:min(len(l), 8)], "--- PASS")
		if strings.HasPrefix(l, "--- SKIP") {
			skip++
			t.Log(l)
		}
	}
	t.Logf("as uid 65534: %d passed, %d skipped", pass, skip)
}

// skipUnlessCI skips with why, or fails in CI (CI=true), whose machine
// must run the suite as both users (issue 20).
func skipUnlessCI(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

// Poll calls cond until it holds, for at most ten seconds, and reports
// whether it did: tests wait on conditions, not for fixed times.
func Poll(cond func() bool) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

var sleeps atomic.Int64

// UniqueSleep is a sleep duration no other process uses: a marker to
// find a process by its arguments (WithArg) from outside its PID
// namespace, unique within this process and across processes.
func UniqueSleep() string {
	return fmt.Sprintf("%d.%d%d", 1000+os.Getpid()%1000, sleeps.Add(1), time.Now().UnixNano()%100000)
}
