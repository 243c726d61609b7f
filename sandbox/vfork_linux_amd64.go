package sandbox

// vforks: on amd64 the command's init starts the command with vforkClone,
// sharing its memory until the exec, instead of copying the helper's page
// tables for a process that execs at once and dropping them again at the
// exec: the two copies and two teardowns of every command's start were a
// fifth of the machine's time in BenchmarkStart (issue 19).
const vforks = true

// vforkClone is in vfork_linux_amd64.s.
//
//go:noescape
func vforkClone(flags uintptr) (pid uintptr, errno uintptr)
