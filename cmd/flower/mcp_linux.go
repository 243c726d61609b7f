package main

import "syscall"

// childAttr has the kernel SIGTERM a task flower mcp started when flower
// mcp dies without stopping it (killed, say): the task records its step as
// killed-by-signal, and start_task continues it later.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
