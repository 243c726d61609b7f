package mcp

import "syscall"

// setDeathSignal has the kernel SIGKILL the server when the OS thread that
// started it exits: it covers the moment before the lifeline watcher runs.
// The starting goroutine keeps its thread locked while the server lives
// (server.spawn).
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
