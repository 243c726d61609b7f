package sandbox

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"
)

// seccompProbeEnv makes TestSeccompProbe the body of a command.
const seccompProbeEnv = "FLOWER_SANDBOX_TEST_SECCOMP"

// probedCalls are the calls TestSeccompProbe makes, with what the filter
// must make them fail with. clone is left out: without the filter it
// would fork this process.
func probedCalls() map[string]syscall.Errno {
	want := map[string]syscall.Errno{"unshare": unix.EPERM, "clone3": unix.ENOSYS}
	for _, n := range refusedCalls {
		want[n] = unix.EPERM
	}
	return want
}

// TestSeccompProbe is not a test: started as a command in the sandbox, it
// makes each probed call with arguments that are all invalid (-1), so
// that without the filter each fails in another way (or, for unshare,
// with every flag, CLONE_NEWUSER included), and prints the errors.
func TestSeccompProbe(t *testing.T) {
	if os.Getenv(seccompProbeEnv) == "" {
		t.Skip("the command of TestSeccompRefusesCalls")
	}
	info, err := arch.GetInfo("")
	if err != nil {
		t.Fatal(err)
	}
	bad := ^uintptr(0)
	for name := range probedCalls() {
		nr, ok := info.SyscallNames[name]
		if !ok {
			fmt.Printf("%s unknown\n", name)
			continue
		}
		_, _, e := syscall.RawSyscall6(uintptr(nr), bad, bad, bad, bad, bad, bad)
		fmt.Printf("%s %d\n", name, int(e))
	}
}

// TestSeccompRefusesCalls (issue 20): in a command, each call of the
// seccomp filter fails with EPERM (clone3 with ENOSYS), as root and, in
// TestAsNobody, as uid 65534.
func TestSeccompRefusesCalls(t *testing.T) {
	needNamespaces(t)
	if seccompFilter() == nil {
		t.Fatal("no seccomp filter for this architecture")
	}
	s := newSandbox(t, Config{Mode: Off})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := s.Start(&Cmd{Path: os.Args[0], Args: []string{os.Args[0], "-test.run=^TestSeccompProbe$"},
		Env: []string{seccompProbeEnv + "=1"}, Stdout: w, Stderr: w})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	waitErr := p.Wait()
	out := make([]byte, 64<<10)
	n, _ := r.Read(out)
	got := map[string]string{}
	for _, l := range strings.Split(string(out[:max(n, 0)]), "\n") {
		if name, errno, ok := strings.Cut(l, " "); ok {
			got[name] = errno
		}
	}
	if waitErr != nil || len(got) == 0 {
		t.Fatalf("probe: %v\n%s", waitErr, out[:max(n, 0)])
	}
	for name, want := range probedCalls() {
		if g := got[name]; g != fmt.Sprint(int(want)) {
			t.Errorf("%s: errno %s, want %d (%v)", name, g, int(want), want)
		}
	}
}
