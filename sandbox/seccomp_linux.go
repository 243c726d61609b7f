package sandbox

import (
	"sync"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// refusedCalls are the system calls a command's process gets EPERM for
// (issue 20): kernel interfaces no build, test or editor needs, each a
// way around the rest of the sandbox or a large kernel attack surface:
// tracing and reading other processes, mounting (the mount view),
// namespaces of other processes, the kernel keyring, eBPF, perf,
// userfaultfd (a staple of kernel exploits), loading kernels and
// modules, and machine-wide switches. Without capabilities most already
// fail; the filter refuses them before the kernel code runs.
var refusedCalls = []string{
	"ptrace", "process_vm_readv", "process_vm_writev",
	"mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"setns", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"reboot", "swapon", "swapoff", "acct", "quotactl",
}

// seccompPolicy refuses refusedCalls, and unshare and clone with
// CLONE_NEWUSER: a user namespace would give the command every capability
// again, in it (the mounts it copies stay locked, but its kernel surface
// grows). clone3 passes its flags in memory, which a filter cannot read:
// it gets ENOSYS, so that libc falls back to clone, as Docker's profile
// does.
func seccompPolicy() seccomp.Policy {
	newUser := seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: unix.CLONE_NEWUSER}}
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionErrno, Names: refusedCalls},
			{Action: seccomp.ActionErrno, NamesWithCondtions: []seccomp.NameWithConditions{
				{Name: "unshare", Conditions: newUser}, {Name: "clone", Conditions: newUser}}},
			{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
		},
	}
}

// foreignABI are the filter's first instructions: a system call made
// through another architecture's ABI than the machine's (int $0x80 on
// amd64: i386's numbers, where mount is 21) fails with ENOSYS. The
// library's program checks the architecture too, but lets every call of
// another one through unfiltered: a command could have made any refused
// call by switching ABI (issue 20). So a 32-bit program cannot run in the
// sandbox; a 64-bit one never makes such calls.
func foreignABI(native *arch.Info) []bpf.Instruction {
	return []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(native.ID), SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	}
}

// filterSelf loads the filter on every thread of this process (TSYNC):
// the subreaper fallback's helper, which starts its command with
// os.StartProcess and so has no place between fork and exec to load it
// in, filters itself, and the command inherits the filter at its fork.
// The helper needs none of the refused calls after: it waits, reads /proc
// and kills. Without a filter for this machine it loads none, as
// execCommand does.
func filterSelf() error {
	prog := seccompFilter()
	if prog == nil {
		return nil
	}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(prog)))
	if e != 0 {
		return e
	}
	return nil
}

// seccompFilter is the assembled filter, built once per helper, or nil
// where the kernel has no seccomp or this machine's architecture is not
// one the library knows: commands then run without it (the rest of the
// sandbox still holds; doc.go) rather than not at all.
var seccompFilter = sync.OnceValue(func() *unix.SockFprog {
	if !seccomp.Supported() {
		return nil
	}
	p := seccompPolicy()
	insts, err := p.Assemble()
	if err != nil {
		return nil
	}
	native, err := arch.GetInfo("")
	if err != nil {
		return nil
	}
	raw, err := bpf.Assemble(append(foreignABI(native), insts...))
	if err != nil || len(raw) == 0 {
		return nil
	}
	f := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return &unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
})
