package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The run's helper (issue 19): one process per Sandbox, started once (see
// run_linux.go), that starts each command asked of it without starting
// flower again. It is the init of the run's PID namespace, so everything
// it started dies with it, and it dies with flower (parent-death signal
// and lifeline, as the helper of one command did).
//
// Each command gets a PID and a mount namespace of its own, made by a
// clone of the helper that never execs (forkCommand; on amd64 it shares
// the helper's memory): it mounts the namespace's /proc, starts the
// command (which applies Landlock and execs), and waits as the
// namespace's init until the command exits; then it exits with the
// command's status, and the kernel kills whatever the command left
// (setsid, double-forked, nohup'd, disowned: all are in the namespace).
// Between clone and exec a Go program may only make raw system calls;
// that code (initMain, execCommand, initReap) is written as the syscall
// package writes its own.
//
// The protocol, on the SOCK_SEQPACKET socket at fd 4: flower sends one
// byte with four descriptors (SCM_RIGHTS): a stream socket for this
// command, and its stdin, stdout and stderr. On the stream socket flower
// writes the request (JSON), and the helper answers {"started":true} or
// {"error":"..."}, then {"exit":N} when the command and everything it
// started are gone. Flower ends a command early by shutting its side of
// the stream for writing (or closing it): the helper kills the command's
// init, and with it the namespace.

// request is one command the run's helper is asked to start.
type request struct {
	Path     string   `json:"path"`
	Args     []string `json:"args"`
	Env      []string `json:"env"`
	Dir      string   `json:"dir,omitempty"`
	Landlock bool     `json:"landlock,omitempty"`
	RW       []string `json:"rw,omitempty"`
	Network  bool     `json:"network,omitempty"`
}

// reply is the helper's answer about a command.
type reply struct {
	Started bool   `json:"started,omitempty"`
	Error   string `json:"error,omitempty"`
	Exit    *int   `json:"exit,omitempty"`
}

// ctrlFD is the helper's end of the control socket; lifeline is fd 3.
const ctrlFD = 4

// serve is the run's helper: it starts commands until flower goes away.
// With a setup error (its mount view could not be made) it refuses each
// command with that error: nothing runs less contained than configured.
func serve(setup error) int {
	unix.CloseOnExec(3)
	unix.CloseOnExec(ctrlFD)
	// The helper holds nothing secret, but commands of the same user need
	// not read or trace it either; its forks (the commands' inits) inherit this.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	go watchLifeline()
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(ctrlFD, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return exitKilled // flower closed the socket: it ended the run or died
		}
		fds := rights(oob[:oobn])
		if len(fds) != 4 {
			closeAll(fds)
			continue
		}
		go command(fds, setup)
	}
}

// rights are the descriptors of a control message.
func rights(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if f, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, f...)
		}
	}
	return fds
}

func closeAll(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}

// command runs one request: fds are its stream socket and its stdio.
func command(fds []int, setup error) {
	f := os.NewFile(uintptr(fds[0]), "command")
	c, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		closeAll(fds[1:])
		return
	}
	defer c.Close()
	enc := json.NewEncoder(c)
	var req request
	if err := json.NewDecoder(c).Decode(&req); err != nil {
		closeAll(fds[1:])
		return
	}
	pid, stack, err := 0, []byte(nil), setup
	if err == nil {
		pid, stack, err = spawn(req, [3]int{fds[1], fds[2], fds[3]})
	}
	closeAll(fds[1:])
	if err != nil {
		_ = enc.Encode(reply{Error: err.Error()})
		return
	}
	if enc.Encode(reply{Started: true}) != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	var mu sync.Mutex // guards exited: pid is not killed once it may be reused
	exited := false
	go func() {
		_, _ = io.Copy(io.Discard, c) // until flower ends the call (or c is closed below)
		mu.Lock()
		if !exited {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		mu.Unlock()
	}()
	code := wait(pid, &mu, &exited)
	freeStack(stack) // the init is reaped, and everything of its namespace gone
	_ = enc.Encode(reply{Exit: &code})
}

// wait waits for the command's init to exit, without reaping it first so
// that the canceller never kills a reused pid, and returns its status.
func wait(pid int, mu *sync.Mutex, exited *bool) int {
	var info unix.Siginfo
	for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
	mu.Lock()
	*exited = true
	mu.Unlock()
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if err != unix.EINTR {
			break
		}
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// spawn starts req in a PID namespace of its own and returns the pid of
// that namespace's init, and the init's stack (to unmap once the init is
// reaped; nil where the init is a fork). It returns when the command has
// been exec'd, or with the reason it could not be.
func spawn(req request, stdio [3]int) (int, []byte, error) {
	a, err := prepare(req, stdio)
	if err != nil {
		return 0, nil, err
	}
	if a.ruleset >= 0 {
		defer unix.Close(a.ruleset)
	}
	var stack []byte
	if vforks {
		if stack, err = initStack(a); err != nil {
			return 0, nil, err
		}
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		freeStack(stack)
		return 0, nil, err
	}
	a.report = p[1]
	pid, errno := forkCommand(a)
	_ = unix.Close(p[1])
	defer unix.Close(p[0])
	if errno != 0 {
		freeStack(stack)
		return 0, nil, fmt.Errorf("clone: %w", errno)
	}
	// The report pipe closes at exec (and when the init has closed its
	// copy, past its last read of a); before, the command writes why not.
	var rep [2]int32
	n, _ := io.ReadFull(fdReader(p[0]), unsafe.Slice((*byte)(unsafe.Pointer(&rep)), 8))
	runtime.KeepAlive(a)
	if n == 8 {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, 0, nil)
		freeStack(stack)
		what := [...]string{"fork", "apply Landlock", "change to " + req.Dir, "exec " + req.Path, "give up privileges", "apply the seccomp filter"}[min(max(rep[0], 0), 5)]
		return 0, nil, fmt.Errorf("%s: %w", what, syscall.Errno(rep[1]))
	}
	return pid, stack, nil
}

// prepare makes the forkArgs of req: everything the init and the command
// need, made beforehand, since between clone and exec nothing may be
// allocated. They are on the heap (newForkArgs), not in spawn's frame: on
// amd64 the init reads them while spawn's goroutine goes on, and its
// stack may move.
func prepare(req request, stdio [3]int) (*forkArgs, error) {
	a := newForkArgs()
	a.stdio, a.ruleset = stdio, -1
	var err error
	if a.path, err = syscall.BytePtrFromString(req.Path); err != nil {
		return nil, err
	}
	if a.argv, err = syscall.SlicePtrFromStrings(req.Args); err != nil {
		return nil, err
	}
	if a.envv, err = syscall.SlicePtrFromStrings(req.Env); err != nil {
		return nil, err
	}
	if req.Dir != "" {
		if a.dir, err = syscall.BytePtrFromString(req.Dir); err != nil {
			return nil, err
		}
	}
	a.proc, _ = syscall.BytePtrFromString("proc")
	a.procDir, _ = syscall.BytePtrFromString("/proc")
	if req.Landlock {
		cfg, rules := landlockRules(req.RW, req.Network)
		fd, flags, err := cfg.NewRulesetFD(rules...)
		if err != nil {
			return nil, fmt.Errorf("Landlock rules: %w", err)
		}
		a.ruleset, a.rulesetFlags = fd, flags
	}
	a.cloneA, a.cloneB = cloneArgs(unix.CLONE_NEWPID | unix.CLONE_NEWNS | uintptr(unix.SIGCHLD))
	a.forkA, a.forkB = cloneArgs(uintptr(unix.SIGCHLD))
	a.capHdr.Version = unix.LINUX_CAPABILITY_VERSION_3
	a.seccomp = seccompFilter()
	a.signals = signalsOf()
	return a, nil
}

// newForkArgs allocates forkArgs on the heap: a pointer a function that
// is not inlined returns always is.
//
//go:noinline
func newForkArgs() *forkArgs { return new(forkArgs) }

// fdReader reads a descriptor with blocking reads.
type fdReader int

func (fd fdReader) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(int(fd), b)
		if err == unix.EINTR {
			continue
		}
		if n == 0 && err == nil {
			return 0, io.EOF
		}
		return max(n, 0), err
	}
}

// cloneArgs orders clone(2)'s flags and stack arguments for this machine.
func cloneArgs(flags uintptr) (a1, a2 uintptr) {
	if runtime.GOARCH == "s390x" {
		return 0, flags
	}
	return flags, 0
}

// forkArgs is what forkCommand needs, prepared beforehand: between clone
// and exec nothing may be allocated.
type forkArgs struct {
	path, dir, proc, procDir *byte
	argv, envv               []*byte
	stdio                    [3]int
	ruleset                  int // -1: no Landlock
	rulesetFlags             uint32
	report                   int // write end of the report pipe
	cloneA, cloneB           uintptr
	forkA, forkB             uintptr
	capHdr                   unix.CapUserHeader
	capData                  [2]unix.CapUserData // zero: no capability at all
	seccomp                  *unix.SockFprog     // nil: no filter
	stackTop                 uintptr             // the init's stack, where it shares the helper's memory (initStack)
	signals                  signals             // what the command resets before its exec, where the init did not
}

//go:linkname runtime_BeforeFork syscall.runtime_BeforeFork
func runtime_BeforeFork()

//go:linkname runtime_AfterFork syscall.runtime_AfterFork
func runtime_AfterFork()

//go:linkname runtime_AfterForkInChild syscall.runtime_AfterForkInChild
func runtime_AfterForkInChild()

// forkCommand starts the command's init, in new PID and mount namespaces,
// and returns its pid. On amd64 the init shares the helper's memory
// (cloneInit, on a stack of its own) instead of copying its page tables:
// that copy, its copy-on-write faults and its teardown at the init's exit
// were the largest part of the helper's time per command (issue 19).
// Elsewhere the init is a fork, as syscall.forkAndExecInChild1 forks.
//
//go:noinline
//go:norace
//go:nocheckptr
func forkCommand(a *forkArgs) (pid int, errno syscall.Errno) {
	runtime_BeforeFork() // signals blocked: the init never takes one
	if vforks {
		r1, e := cloneInit(unix.CLONE_VM|unix.CLONE_NEWPID|unix.CLONE_NEWNS|uintptr(unix.SIGCHLD), a.stackTop, initMainPC, a)
		runtime_AfterFork()
		return int(r1), syscall.Errno(e)
	}
	r1, _, err1 := syscall.RawSyscall6(syscall.SYS_CLONE, a.cloneA, a.cloneB, 0, 0, 0, 0)
	if err1 != 0 || r1 != 0 {
		runtime_AfterFork()
		return int(r1), err1
	}
	runtime_AfterForkInChild() // default signal handlers, signals unblocked
	initMain(a)
	return 0, 0 // not reached
}

// initMain is the command's init, pid 1 of its namespace. Only raw system
// calls run in it, as in syscall.forkAndExecInChild1: no allocation, and,
// since on amd64 it runs on a stack no goroutine owns, nothing that checks
// the stack (nosplit throughout). It
//
//   - mounts the namespace's /proc (best effort, as the helper does);
//   - puts the command's stdio on 0-2, the Landlock ruleset on 3 and the
//     report pipe on 4, and closes every other descriptor (the helper
//     holds other commands' pipes, which must not stay open here);
//   - starts the command (execCommand), with vfork where it can;
//   - reaps every process of the namespace until the command exits, and
//     exits with its status (128+signal when killed) (initReap).
//
//go:nosplit
//go:norace
//go:nocheckptr
func initMain(a *forkArgs) {
	var (
		err1   syscall.Errno
		cmd    uintptr
		i      uintptr
		code   uintptr
		report [2]int32
	)
	_, _, _ = syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(a.proc)), uintptr(unsafe.Pointer(a.procDir)),
		uintptr(unsafe.Pointer(a.proc)), unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, 0, 0)
	for i = 0; i < 3; i++ {
		_, _, _ = syscall.RawSyscall(syscall.SYS_DUP3, uintptr(a.stdio[i]), i, 0)
	}
	if a.ruleset >= 0 {
		_, _, _ = syscall.RawSyscall(syscall.SYS_DUP3, uintptr(a.ruleset), 3, unix.O_CLOEXEC)
	} else {
		_, _, _ = syscall.RawSyscall(syscall.SYS_CLOSE, 3, 0, 0)
	}
	_, _, _ = syscall.RawSyscall(syscall.SYS_DUP3, uintptr(a.report), 4, unix.O_CLOEXEC)
	_, _, err1 = syscall.RawSyscall(unix.SYS_CLOSE_RANGE, 5, uintptr(^uint32(0)), 0)
	if err1 != 0 {
		for i = 5; i < 4096; i++ {
			_, _, _ = syscall.RawSyscall(syscall.SYS_CLOSE, i, 0, 0)
		}
	}

	if vforks {
		// The command shares this init's memory, stack included, until its
		// exec, and the init waits meanwhile: what the command writes in
		// this frame is the init's after, which goes on with cmd only
		// (initReap).
		cmd, code = vforkClone(unix.CLONE_VM | unix.CLONE_VFORK | uintptr(unix.SIGCHLD))
		err1 = syscall.Errno(code)
	} else {
		cmd, _, err1 = syscall.RawSyscall6(syscall.SYS_CLONE, a.forkA, a.forkB, 0, 0, 0, 0)
	}
	if err1 != 0 {
		report[0], report[1] = 0, int32(err1)
		_, _, _ = syscall.RawSyscall(syscall.SYS_WRITE, 4, uintptr(unsafe.Pointer(&report)), 8)
		_, _, _ = syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 126, 0, 0)
	}
	if cmd == 0 {
		execCommand(a)
	}
	initReap(cmd)
}

// execCommand is the command, between its clone and its exec. Root gives
// up root (issue 20): the bounding set first (that needs CAP_SETPCAP),
// then the ambient, effective, permitted and inheritable sets, so that an
// exec gains nothing back, not even as uid 0; no_new_privs holds that for
// setuid programs too. It leaves the helper's session (so it has no
// controlling terminal: /dev/tty cannot be opened), applies Landlock and
// the seccomp filter (seccomp_linux.go), changes directory and execs, or
// writes on the report pipe what failed and exits.
//
//go:nosplit
//go:norace
//go:nocheckptr
func execCommand(a *forkArgs) {
	var (
		err1   syscall.Errno
		i      uintptr
		report [2]int32
	)
	for i = 0; i < 64; i++ {
		_, _, _ = syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_CAPBSET_DROP, i, 0, 0, 0, 0)
	}
	_, _, _ = syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0)
	report[0] = 4
	_, _, err1 = syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&a.capHdr)), uintptr(unsafe.Pointer(&a.capData[0])), 0)
	if err1 == 0 {
		_, _, err1 = syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0)
	}
	if err1 == 0 {
		_, _, err1 = syscall.RawSyscall(syscall.SYS_SETSID, 0, 0, 0)
	}
	if err1 == 0 && a.ruleset >= 0 {
		report[0] = 1
		_, _, err1 = syscall.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, 3, uintptr(a.rulesetFlags), 0)
	}
	if err1 == 0 && a.seccomp != nil {
		report[0] = 5
		_, _, err1 = syscall.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(a.seccomp)))
	}
	if err1 == 0 && a.dir != nil {
		report[0] = 2
		_, _, err1 = syscall.RawSyscall(syscall.SYS_CHDIR, uintptr(unsafe.Pointer(a.dir)), 0, 0)
	}
	if err1 == 0 {
		report[0] = 3
		a.signals.reset()
		_, _, err1 = syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(a.path)),
			uintptr(unsafe.Pointer(&a.argv[0])), uintptr(unsafe.Pointer(&a.envv[0])))
	}
	report[1] = int32(err1)
	_, _, _ = syscall.RawSyscall(syscall.SYS_WRITE, 4, uintptr(unsafe.Pointer(&report)), 8)
	_, _, _ = syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 127, 0, 0)
}

// initReap is the rest of the command's init (forkCommand): it holds
// nothing, reaps everything, and exits with the command's status.
//
//go:noinline
//go:nosplit
//go:norace
func initReap(cmd uintptr) {
	var (
		r1   uintptr
		err1 syscall.Errno
		i    uintptr
		ws   uint32
		code uintptr
	)
	_, _, err1 = syscall.RawSyscall(unix.SYS_CLOSE_RANGE, 0, uintptr(^uint32(0)), 0)
	if err1 != 0 {
		for i = 0; i < 5; i++ {
			_, _, _ = syscall.RawSyscall(syscall.SYS_CLOSE, i, 0, 0)
		}
	}
	for {
		r1, _, err1 = syscall.RawSyscall6(syscall.SYS_WAIT4, ^uintptr(0), uintptr(unsafe.Pointer(&ws)), 0, 0, 0, 0)
		if err1 == syscall.EINTR {
			continue
		}
		if err1 != 0 {
			_, _, _ = syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 126, 0, 0)
		}
		if r1 == cmd {
			break
		}
	}
	code = uintptr(ws>>8) & 0xff
	if ws&0x7f != 0 {
		code = 128 + uintptr(ws&0x7f)
	}
	_, _, _ = syscall.RawSyscall(syscall.SYS_EXIT_GROUP, code, 0, 0)
}
