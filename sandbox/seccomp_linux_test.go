package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
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
	both(t, testSeccompRefusesCalls)
}

func testSeccompRefusesCalls(t *testing.T) {
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

// TestSeccompForeignABI runs the assembled filter in a BPF interpreter on
// the data the kernel gives it: a call through another architecture's
// ABI (i386's int $0x80 on amd64, arm's on arm64), refused or not on the
// machine's, fails with ENOSYS, where the library's program alone let it
// through unfiltered; the machine's own calls are filtered as before.
func TestSeccompForeignABI(t *testing.T) {
	native, err := arch.GetInfo("")
	if err != nil {
		t.Skip(err)
	}
	foreign := map[arch.AuditArch]*arch.Info{arch.X86_64.ID: arch.I386, arch.AARCH64.ID: arch.ARM}[native.ID]
	prog := seccompFilter()
	if foreign == nil || prog == nil {
		t.Skipf("no foreign ABI or no filter on %s", native.Name)
	}
	vm, err := bpf.NewVM(rawInstructions(prog))
	if err != nil {
		t.Fatal(err)
	}
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	)
	for _, c := range []struct {
		on   *arch.Info
		call string
		arg0 uint64
		want uint32
	}{
		{native, "getpid", 0, allow},
		{native, "mount", 0, eperm},
		{native, "unshare", unix.CLONE_NEWUSER, eperm},
		{native, "unshare", unix.CLONE_NEWNS, allow},
		{foreign, "mount", 0, enosys},
		{foreign, "getpid", 0, enosys},
		{foreign, "unshare", unix.CLONE_NEWUSER, enosys},
	} {
		nr, ok := c.on.SyscallNames[c.call]
		if !ok {
			t.Fatalf("%s has no %s", c.on.Name, c.call)
		}
		got, err := vm.Run(seccompData(uint32(nr), uint32(c.on.ID), c.arg0))
		if err != nil || uint32(got) != c.want {
			t.Errorf("%s on %s: %#x, %v; want %#x", c.call, c.on.Name, got, err, c.want)
		}
	}
}

// rawInstructions is the filter as x/net/bpf's interpreter takes it.
func rawInstructions(p *unix.SockFprog) []bpf.Instruction {
	f := unsafe.Slice(p.Filter, p.Len)
	out := make([]bpf.Instruction, len(f))
	for i, r := range f {
		out[i] = bpf.RawInstruction{Op: r.Code, Jt: r.Jt, Jf: r.Jf, K: r.K}.Disassemble()
	}
	return out
}

// seccompData is struct seccomp_data as the interpreter reads it: the
// kernel's loads are in the machine's byte order, the interpreter's in
// network order, so each 32-bit word sits where the filter loads it,
// written big-endian (an argument's low word first, at little-endian's
// offsets, which is where the library loads it on these machines).
func seccompData(nr, arch uint32, arg0 uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], nr)
	binary.BigEndian.PutUint32(b[4:], arch)
	binary.BigEndian.PutUint32(b[16:], uint32(arg0))
	binary.BigEndian.PutUint32(b[20:], uint32(arg0>>32))
	return b
}
