package builtin

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/internal/proctest"
)

// procStat returns the state and process group of pid from /proc, or
// ok=false when the process is gone.
func procStat(pid int) (state byte, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name may hold spaces; the fields after it do not.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 3 {
		return 0, 0, false
	}
	pgid, _ = strconv.Atoi(f[2])
	return f[0][0], pgid, true
}

// alive reports whether pid runs. A zombie counts as dead: it will never
// run again, and whether it is reaped depends on who inherited it.
func alive(pid int) bool {
	state, _, ok := procStat(pid)
	return ok && state != 'Z'
}

// groupMembers lists the live processes of process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, g, ok := procStat(pid); ok && g == pgid && state != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// eventually polls cond until it holds or the deadline passes. Polling a
// condition is how these tests wait: no fixed sleeps.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !poll(10*time.Second, cond) {
		t.Fatalf("timed out waiting until %s", what)
	}
}

// poll reports whether cond came true within d; safe off the test goroutine.
func poll(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// readPID waits for a shell to write its pid to a file and returns it.
func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	eventually(t, "a pid is written to "+filepath.Base(path), func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

// uniqueSleep is a sleep duration no other process uses.
var uniqueSleep = proctest.UniqueSleep

// withArg lists the live processes one of whose arguments is arg.
var withArg = proctest.WithArg
