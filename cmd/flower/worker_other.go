//go:build !linux

package main

import "syscall"

// driverAttr: only Linux can tie a child's life to its parent's.
func driverAttr() *syscall.SysProcAttr { return nil }
