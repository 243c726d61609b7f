//go:build unix && !linux

package tool

import "syscall"

// setDeathSignal is a no-op where there is no parent-death signal; the
// lifeline watcher of watchScript still kills the group when flower dies.
func setDeathSignal(*syscall.SysProcAttr) {}
