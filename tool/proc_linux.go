package tool

import "syscall"

// setDeathSignal has the kernel SIGKILL the shell when the OS thread that
// started it exits; startAndWait keeps that thread locked until Wait
// returns, so in practice this fires when flower dies.
func setDeathSignal(a *syscall.SysProcAttr) {
	a.Pdeathsig = syscall.SIGKILL
}
