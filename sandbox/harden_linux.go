package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Harden keeps flower's secrets from processes of the same user, the
// tools among them (issue 10): it blanks the values of the named
// variables in /proc/<flower>/environ (hideEnviron), and makes the
// process not dumpable, so that no process of the same user (but root)
// may read its /proc/<pid>/environ or memory, or ptrace it. Children are
// dumpable again after exec, so tools are unaffected. Secrets are also
// scrubbed from everything flower writes: this is a second layer, and no
// layer against root.
//
// A process that is not dumpable cannot write the user-namespace maps of
// a child (the child, a copy, is not dumpable either until it execs):
// the helper's start (and the probe) make the process dumpable for that
// moment only (withDumpable). No tool can use that moment: tools run in
// PID namespaces of their own, where flower has no pid, under Landlock,
// which forbids tracing it; without namespaces there are no maps to write
// and no such moment. Harden does not wait for a start under way: the
// process is not dumpable from the end of the last one. Best effort: the
// error is hideEnviron's.
func Harden(secretNames []string) error {
	err := hideEnviron(secretNames)
	dumpMu.Lock()
	hardened = true
	if starting == 0 { // else the last start under way makes it not dumpable as it ends
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	}
	dumpMu.Unlock()
	return err
}

var (
	dumpMu   sync.Mutex // guards hardened, starting and the dumpable flag
	hardened bool       // Harden made the process not dumpable
	starting int        // starts under way (withDumpable)
)

// withDumpable runs start, which forks a child whose user-namespace maps
// this process writes, with the process dumpable (see Harden). The lock
// is not held while start runs: Harden, on the path to the first model
// request, does not wait for the namespace probe or the helper's launch
// started before it (issue 19), and starts do not wait for each other.
func withDumpable(start func() error) error {
	dumpMu.Lock()
	if starting == 0 && hardened {
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	}
	starting++
	dumpMu.Unlock()
	defer func() {
		dumpMu.Lock()
		if starting--; starting == 0 && hardened {
			_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
		}
		dumpMu.Unlock()
	}()
	return start()
}

// hideEnviron blanks the values of the named variables in this process's
// original environment block, the memory /proc/<pid>/environ reads: a
// tool process that reads flower's environment there (cat
// /proc/$PPID/environ, as root even) no longer finds the keys, and so
// cannot use them, not even within one command whose output is scrubbed
// (issue 10). Go copied the environment at start, so os.Getenv and the
// environment of children are unaffected. Best effort: a kernel that
// refuses writes to /proc/self/mem leaves the block as it is, and the
// scrubbing of tool results still holds.
func hideEnviron(names []string) error {
	start, end, err := environBounds()
	if err != nil {
		return err
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("hide environ: %w", err)
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, start); err != nil {
		return fmt.Errorf("hide environ: %w", err)
	}
	changed := false
	off := 0
	for _, kv := range bytes.Split(block, []byte{0}) {
		name, _, ok := bytes.Cut(kv, []byte{'='})
		if ok && isOneOf(string(name), names) {
			for i := off + len(name) + 1; i < off+len(kv); i++ {
				block[i] = 0
			}
			changed = true
		}
		off += len(kv) + 1
	}
	if !changed {
		return nil
	}
	if _, err := mem.WriteAt(block, start); err != nil {
		return fmt.Errorf("hide environ: %w", err)
	}
	return nil
}

// environBounds are env_start and env_end of /proc/self/stat (fields 50
// and 51, counted after the command name, which may hold spaces).
func environBounds() (start, end int64, err error) {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("hide environ: %w", err)
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("hide environ: unreadable /proc/self/stat")
	}
	f := strings.Fields(string(data[i+1:])) // f[0] is field 3
	if len(f) < 49 {
		return 0, 0, fmt.Errorf("hide environ: /proc/self/stat has no env_start (kernel before 3.5)")
	}
	start, err1 := strconv.ParseInt(f[47], 10, 64)
	end, err2 := strconv.ParseInt(f[48], 10, 64)
	if err1 != nil || err2 != nil || end <= start {
		return 0, 0, fmt.Errorf("hide environ: bad env_start/env_end in /proc/self/stat")
	}
	return start, end, nil
}

func isOneOf(name string, names []string) bool { return slices.Contains(names, name) }
