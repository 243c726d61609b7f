//go:build !linux

package main

import "syscall"

// childAttr: without a parent-death signal, a task outlives a flower mcp
// that is killed; a flower mcp that exits stops its tasks (driver.stopAll).
func childAttr() *syscall.SysProcAttr { return nil }
