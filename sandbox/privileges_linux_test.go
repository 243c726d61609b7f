package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"
)

// TestRootGivesUpRoot: a command holds no capability, not even the
// bounding set, and has no_new_privs (issue 20), so that as root it cannot
// make a device node, set the host name or give a file away. Mode off:
// this holds without Landlock. (The host name is set to what it is: were
// the test to fail, nothing changes.)
func TestRootGivesUpRoot(t *testing.T) {
	both(t, func(t *testing.T) {
		ns := namespaces().err == nil
		s := newSandbox(t, Config{Mode: Off})
		out, err := run(t, s, `touch f
mknod dev c 1 3 && echo BAD mknod
hostname "$(hostname)" && echo BAD hostname
chown 1:1 f && echo BAD chown
grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status`)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if strings.Contains(out, "BAD") {
			t.Fatalf("a privileged operation succeeded:\n%s", out)
		}
		for _, f := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb", "CapBnd"} {
			// An unprivileged user cannot drop its bounding set without a
			// user namespace (no CAP_SETPCAP); it grants nothing anyway.
			if f == "CapBnd" && !ns && os.Geteuid() != 0 {
				continue
			}
			if !regexp.MustCompile(`(?m)^` + f + `:\s+0+$`).MatchString(out) {
				t.Errorf("%s is not empty:\n%s", f, out)
			}
		}
		if !regexp.MustCompile(`(?m)^NoNewPrivs:\s+1$`).MatchString(out) {
			t.Errorf("no_new_privs is not set:\n%s", out)
		}
	})
}

// ttyEnv names the terminal of TestNoTerminal's child (its /dev/pts path).
const ttyEnv = "FLOWER_SANDBOX_TEST_TTY"

// TestNoTerminal: a command cannot write to the person's terminal (issue
// 20), neither through /dev/tty nor by its /dev/pts name, so an OSC 52
// (set the clipboard) never reaches it. The test runs a child on a
// pseudo terminal that is its controlling terminal, as flower runs in a
// person's terminal; the child writes a line there itself (so the test
// sees the terminal is reachable from outside the sandbox), then runs the
// command that tries (without namespaces, under Landlock: see
// noTerminalChild).
func TestNoTerminal(t *testing.T) {
	if name := os.Getenv(ttyEnv); name != "" {
		noTerminalChild(t, name)
		return
	}
	both(t, func(t *testing.T) {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Skipf("no pseudo terminal here: %v", err)
		}
		defer ptmx.Close()
		c := exec.Command(os.Args[0], "-test.run=^TestNoTerminal$", "-test.v")
		c.Env = append(os.Environ(), ttyEnv+"="+tty.Name())
		if namespaces().err != nil {
			c.Env = append(c.Env, parentNoNS+"=1")
		}
		var out bytes.Buffer
		c.Stdin, c.Stdout, c.Stderr = tty, &out, &out
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
		seen := make(chan []byte)
		go func() { b, _ := io.ReadAll(ptmx); seen <- b }() // EIO once no one holds the terminal
		err = c.Wait()
		got := <-seen
		if err != nil || !strings.Contains(out.String(), "ENDED") {
			t.Fatalf("child: %v\n%s", err, out.String())
		}
		if !bytes.Contains(got, []byte("flower reaches its terminal")) {
			t.Fatalf("the child's own line did not reach the terminal: %q", got)
		}
		if bytes.Contains(got, []byte("52;")) || bytes.Contains(got, []byte("sandbox")) {
			t.Fatalf("the sandbox wrote to the terminal: %q\nchild:\n%s", got, out.String())
		}
	})
}

func noTerminalChild(t *testing.T, name string) {
	if os.Getenv(parentNoNS) != "" {
		nsConf = nsConfig{err: fmt.Errorf("forced by the test")}
		nsOnce.Do(func() {})
	}
	f, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("the child has no terminal: %v", err)
	}
	fmt.Fprintln(f, "flower reaches its terminal")
	f.Close()
	// With namespaces the mount view hides the terminals, Landlock or
	// not; without, only Landlock keeps /dev/pts/N from being written.
	mode := Off
	if os.Getenv(parentNoNS) != "" {
		mode = Auto
	}
	s := newSandbox(t, Config{Mode: mode})
	osc := `printf '\033]52;c;c2VjcmV0\a sandbox\n'`
	out, err := run(t, s, fmt.Sprintf("%s > /dev/tty; %s > %s; ls /dev/pts; echo ENDED", osc, osc, name))
	fmt.Printf("command: %v\n%s", err, out)
}
