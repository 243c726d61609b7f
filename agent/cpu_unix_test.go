//go:build unix

package agent_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used so far, in all its
// threads (the garbage collector's included): on a shared machine it
// varies less than the wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
