package proctest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Jobs are the kinds of background job a command can leave behind (issue
// 20): each line starts `sleep M` in a way of its own, and the sleep's
// shell writes a line to the fifo f once it runs. The sandbox's tests
// and flower's (through the real binary) use the same list.
var Jobs = []struct{ Name, Line string }{
	{"ampersand", `sh -c 'echo > f; exec sleep M' >/dev/null 2>&1 &`},
	{"setsid", `setsid sh -c 'echo > f; exec sleep M' >/dev/null 2>&1 &`},
	{"setsid -f", `setsid -f sh -c 'echo > f; exec sleep M' >/dev/null 2>&1`},
	{"double fork", `( ( sh -c 'echo > f; exec sleep M' >/dev/null 2>&1 & ) & )`},
	{"disown", `sh -c 'echo > f; exec sleep M' >/dev/null 2>&1 & disown`},
	{"nohup", `nohup sh -c 'echo > f; exec sleep M' >/dev/null 2>&1 &`},
	// A daemon as Python's daemon recipes make one: fork, setsid, fork
	// again, the parents exit at once.
	{"python daemon", `PYTHON -c 'import os, sys
if os.fork(): sys.exit()
os.setsid()
if os.fork(): sys.exit()
os.execvp("sh", ["sh", "-c", "echo > f; exec sleep M"])' >/dev/null 2>&1`},
}

// Kinds is how many sleeps a script of every job kind runs: one per
// kind, and the script's own.
var Kinds = len(Jobs) + 1

// python3 is the interpreter the python daemon job uses: one this user
// may run (LookPath skips what it cannot execute, such as a shim under
// root's home when a suite runs as uid 65534).
var python3, _ = exec.LookPath("python3")

// JobScript starts the given job lines with marker M and waits until each
// of their sleeps runs, then runs tail. Where a job should do something
// after its sleep, a line may say so in place of `exec sleep M`.
func JobScript(lines []string, marker, tail string) string {
	var b strings.Builder
	b.WriteString("rm -f f; mkfifo f || exit 1\n")
	for _, l := range lines {
		l = strings.ReplaceAll(l, "PYTHON", python3)
		b.WriteString(strings.ReplaceAll(l, "sleep M", "sleep "+marker) + "\n")
		b.WriteString("until read -r x < f; do :; done\n") // opening the fifo may be interrupted by SIGCHLD
	}
	b.WriteString(tail + "\n")
	return b.String()
}

// AllJobs is the line of every kind.
func AllJobs() []string {
	var out []string
	for _, j := range Jobs {
		out = append(out, j.Line)
	}
	return out
}

// NeedJobTools returns bash's path, and skips without bash (for disown),
// util-linux's setsid or python3, except in CI, which must have them.
func NeedJobTools(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"setsid", "nohup", "mkfifo", "python3", "bash"} {
		if _, err := exec.LookPath(name); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("no %s in CI", name)
			}
			t.Skipf("no %s here", name)
		}
	}
	bash, _ := exec.LookPath("bash")
	return bash
}
