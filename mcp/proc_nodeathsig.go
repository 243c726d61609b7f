//go:build unix && !linux

package mcp

import "syscall"

// setDeathSignal is a no-op without a parent-death signal; the lifeline
// watcher still kills the group when flower dies.
func setDeathSignal(*syscall.SysProcAttr) {}
