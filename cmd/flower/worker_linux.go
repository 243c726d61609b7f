package main

import "syscall"

// driverAttr makes a driver die with its worker: a worker killed with -9,
// or whose machine is lost, must not leave drivers that still hold leases
// (a driver that outlived its worker would go on, but nobody would
// supervise it).
func driverAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
