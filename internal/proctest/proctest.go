// Package proctest finds processes from outside for tests that check what
// a tool, a sandbox or flower left running (R9.4): by an argument, since
// a process in a PID namespace has another pid inside.
package proctest

import (
	"bytes"
	"os"
	"strconv"
)

// WithArg lists the live processes one of whose arguments is arg (none
// where there is no /proc).
func WithArg(arg string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue // gone, or a zombie
		}
		for _, a := range bytes.Split(b, []byte{0}) {
			if string(a) == arg {
				out = append(out, pid)
			}
		}
	}
	return out
}
