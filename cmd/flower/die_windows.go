package main

import (
	"os"
	"syscall"
)

// dieOf ends the process as a signal would: Windows has no signal to
// raise at itself, so the exit code is the shell's 128+s (R3.7).
func dieOf(s syscall.Signal) { os.Exit(128 + int(s)) }
