package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// init turns the program into the helper when InitEnv is set: package
// initialization runs before main and before TestMain, so every binary
// that links this package (flower, and the test binaries of the packages
// that run tools) can serve as the helper without a hook of its own.
func init() {
	js, ok := os.LookupEnv(InitEnv)
	if !ok {
		return
	}
	os.Exit(helper(js))
}

// Exit codes of the helper itself, as a shell would give them.
const (
	exitSetup  = 126 // the sandbox could not be applied: nothing ran
	exitStart  = 127 // the command could not be started
	exitKilled = 137 // flower went away: everything was killed
)

// helper runs the spec's command contained and returns its exit status.
func helper(js string) int {
	var sp spec
	if err := json.Unmarshal([]byte(js), &sp); err != nil {
		return fail(exitSetup, "bad %s: %v", InitEnv, err)
	}
	_ = os.Unsetenv(InitEnv)
	if sp.Probe {
		return 0
	}
	pid1 := os.Getpid() == 1
	if sp.Mount {
		mountProc()
		if err := applyView(sp.Hide, sp.Protect); err != nil {
			if !sp.Serve {
				return fail(exitSetup, "%v", err)
			}
			return serve(err)
		}
	}
	if sp.Serve {
		return serve(nil)
	}
	if err := dropPrivileges(); err != nil {
		return fail(exitSetup, "give up privileges: %v", err)
	}
	if !pid1 {
		// No namespace: orphans come to us, so we can find and kill them.
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return fail(exitSetup, "become a subreaper: %v", err)
		}
	}
	if sp.Landlock {
		if err := restrict(sp); err != nil {
			return fail(exitSetup, "apply Landlock: %v", err)
		}
	}
	if err := filterSelf(); err != nil {
		return fail(exitSetup, "apply the seccomp filter: %v", err)
	}
	// The lifeline must not reach the command: only the helper watches it.
	unix.CloseOnExec(3)
	// Setsid: no controlling terminal, so no /dev/tty (issue 20).
	p, err := os.StartProcess(sp.Path, sp.Args, &os.ProcAttr{Env: os.Environ(),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}, Sys: &syscall.SysProcAttr{Setsid: true}})
	if err != nil {
		return fail(exitStart, "start %s: %v", sp.Path, err)
	}
	if pid1 {
		go watchLifeline()
		return reap(p.Pid)
	}
	return reapAndKill(p.Pid)
}

// reapAndKill is the subreaper's end of a command: when the command
// exits, or flower closes the lifeline, it kills every descendant and
// returns the command's status. The kills are sent from this goroutine,
// on the thread the command was started from (init runs locked to the
// main thread; the lock is made explicit here): go-landlock restricts
// each thread on its own, so every thread is in a Landlock domain of its
// own, and with signal scoping (ABI 6) a kill sent from another thread
// of the helper is refused (EPERM), which left every background job of a
// call alive after a SIGKILL of flower where namespaces are unavailable.
func reapAndKill(cmd int) int {
	runtime.LockOSThread()
	exited := make(chan int, 1)
	go func() { exited <- reap(cmd) }()
	life := make(chan struct{})
	go func() { waitLifeline(); close(life) }()
	select {
	case code := <-exited:
		killDescendants()
		return code
	case <-life:
		killDescendants()
		os.Exit(exitKilled)
		return exitKilled
	}
}

// dropPrivileges gives up every capability of this process, the bounding
// set included, and sets no_new_privs, on every thread (capabilities
// belong to threads), so that the command it starts holds none, not even
// as root (issue 20), nor the one the helper kept to mount /proc
// (launch_linux.go, attr). execCommand does the same for the run's
// helper's commands, with raw system calls.
func dropPrivileges() error {
	for c := range uintptr(64) {
		// EINVAL past the kernel's last capability; EPERM without
		// CAP_SETPCAP, where the set is already what the user may have.
		_, _, _ = psx.Syscall6(syscall.SYS_PRCTL, unix.PR_CAPBSET_DROP, c, 0, 0, 0, 0)
	}
	if _, _, e := psx.Syscall6(syscall.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("clear ambient capabilities: %w", e)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, e := psx.Syscall3(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("capset: %w", e)
	}
	if _, _, e := psx.Syscall6(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("no_new_privs: %w", e)
	}
	return nil
}

func fail(code int, format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "flower sandbox: "+format+"\n", args...)
	return code
}

// mountProc gives the namespace its own /proc: the command sees its own
// processes only, and no /proc/<pid> of flower or anyone else. The mounts
// are made private first so that nothing propagates to the host; if that
// fails, /proc is left alone.
func mountProc() {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return
	}
	_ = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
}

// devices are the files everyone writes to; the rest of /dev stays read-only.
// /dev/tty is not among them: a command has no controlling terminal, and
// an escape sequence written there (OSC 52: the clipboard) would reach the
// person's terminal past flower's stripping (issue 20).
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/ptmx"}

// restrict applies Landlock to the helper, which the command inherits:
// read anything, write only sp.RW, no TCP unless sp.Network, and the
// scopes (no signals to, no abstract sockets of, no ptrace of processes
// outside). Best effort: what the kernel lacks is skipped, as New said.
func restrict(sp spec) error {
	cfg, rules := landlockRules(sp.RW, sp.Network)
	return cfg.Restrict(rules...)
}

// landlockRules are the Landlock configuration and rules restrict applies:
// write only rw, and no TCP unless network.
func landlockRules(rw []string, network bool) (landlock.Config, []landlock.Rule) {
	cfg := landlock.V11
	if network {
		cfg.HandledAccessNet = 0
	}
	ro := landlock.RODirs("/")
	if network {
		ro = ro.WithResolveUnix() // Unix sockets count as network
	}
	var dirs, files []string
	for _, p := range rw {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			files = append(files, p)
		} else {
			dirs = append(dirs, p)
		}
	}
	return cfg.BestEffort(), []landlock.Rule{ro,
		landlock.RWDirs(dirs...).WithRefer().IgnoreIfMissing(),
		landlock.RWFiles(append(files, devices...)...).IgnoreIfMissing()}
}

// watchLifeline blocks until flower closes the lifeline (it ended the
// call, or died), then exits: as pid 1, that kills the namespace.
func watchLifeline() {
	waitLifeline()
	os.Exit(exitKilled)
}

// waitLifeline blocks until flower closes the lifeline.
func waitLifeline() {
	life := os.NewFile(3, "lifeline")
	buf := make([]byte, 1)
	for {
		if _, err := life.Read(buf); err != nil {
			return
		}
	}
}

// reap waits for every child (orphans come to the namespace's init, or to
// the subreaper) until the command exits, and returns its status.
func reap(cmd int) int {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err == unix.ECHILD {
			// The lifeline's watcher reaped the command while it killed
			// everything (killDescendants): flower ended the call.
			return exitKilled
		}
		if err != nil {
			return fail(exitStart, "wait: %v", err)
		}
		if pid != cmd {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// killDescendants SIGKILLs every descendant of this process and reaps
// them, scanning again until none is left (or two seconds pass: a fork
// bomb could outrun the scans).
func killDescendants() {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		found := descendants(os.Getpid())
		for _, pid := range found {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		for {
			var ws unix.WaitStatus
			if pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
		if len(found) == 0 {
			return
		}
	}
}

// descendants lists the live (not zombie) descendants of root, from /proc.
func descendants(root int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf is pid's parent from /proc/pid/stat; zombies are left out.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // the name may hold spaces
	if len(f) < 2 || f[0] == "Z" {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}
