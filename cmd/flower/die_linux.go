package main

import (
	"os/signal"
	"runtime"
	"syscall"
)

// dieOf ends the process by signal s, as the shell expects (R3.7). The
// signal goes to this very thread, which handles it on its way back from
// the syscall: sent to the process, it may be handled by another thread
// only after os.Exit has ended the process with a plain exit code.
func dieOf(s syscall.Signal) {
	signal.Reset(s)
	runtime.LockOSThread()
	syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), s)
}
