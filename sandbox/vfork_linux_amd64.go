package sandbox

import (
	"fmt"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// vforks: on amd64 the command's init shares the helper's memory
// (cloneInit) and starts the command with vforkClone, sharing its memory
// until the exec, instead of copying the helper's page tables for each
// and dropping them again at the exec and at the init's exit: those
// copies and teardowns were most of the helper's time per command
// (issue 19).
const vforks = true

// vforkClone and cloneInit are in vfork_linux_amd64.s.
//
//go:noescape
func vforkClone(flags uintptr) (pid uintptr, errno uintptr)

//go:noescape
func cloneInit(flags, stack, fn uintptr, a *forkArgs) (pid uintptr, errno uintptr)

// initMainPC is initMain's entry for the register ABI: a func value of a
// Go function points at a word holding it.
var initMainPC = func() uintptr {
	f := initMain
	return **(**uintptr)(unsafe.Pointer(&f))
}()

// initStackSize is the init's stack: initMain, execCommand and the raw
// system calls need a few hundred bytes; below it a guard page.
const initStackSize = 64 << 10

// initStack maps a stack for the init of a's command and sets a.stackTop.
func initStack(a *forkArgs) ([]byte, error) {
	page := unix.Getpagesize()
	b, err := unix.Mmap(-1, 0, page+initStackSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_STACK)
	if err != nil {
		return nil, fmt.Errorf("map the init's stack: %w", err)
	}
	if err := unix.Mprotect(b[:page], unix.PROT_NONE); err != nil {
		_ = unix.Munmap(b)
		return nil, fmt.Errorf("guard the init's stack: %w", err)
	}
	a.stackTop = uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(len(b))
	return b, nil
}

// freeStack unmaps an init's stack once nothing runs on it.
func freeStack(b []byte) {
	if b != nil {
		_ = unix.Munmap(b)
	}
}

// signals is what a command started from a process sharing the helper's
// memory must undo before its exec, since no runtime_AfterForkInChild ran
// for it: the signals the helper handles go back to their default action
// (a signal that came before the exec would otherwise run the runtime's
// handler, in the helper's memory), then the helper's signal mask is
// restored (the init runs with every signal blocked).
type signals struct {
	handled uint64 // bit n-1: signal n has a handler of the runtime
	mask    uint64
}

// sigaction is the kernel's struct sigaction on amd64.
type sigaction struct {
	handler, flags, restorer uintptr
	mask                     uint64
}

// signalsOf reads, once, which signals the helper handles and its mask.
var signalsOf = sync.OnceValue(func() signals {
	var s signals
	for sig := uintptr(1); sig <= 64; sig++ {
		var old sigaction
		_, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, 0, uintptr(unsafe.Pointer(&old)), 8, 0, 0)
		if e == 0 && old.handler > 1 { // neither SIG_DFL nor SIG_IGN
			s.handled |= 1 << (sig - 1)
		}
	}
	_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_BLOCK, 0, uintptr(unsafe.Pointer(&s.mask)), 8, 0, 0)
	return s
})

// reset gives the handled signals their default action and restores the
// mask, with raw system calls only (execCommand).
//
//go:nosplit
//go:norace
//go:nocheckptr
func (s *signals) reset() {
	var (
		dfl sigaction
		sig uintptr
	)
	for sig = 1; sig <= 64; sig++ {
		if s.handled&(1<<(sig-1)) != 0 {
			_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
		}
	}
	_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&s.mask)), 0, 8, 0, 0)
}
