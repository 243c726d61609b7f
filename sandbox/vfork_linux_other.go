//go:build linux && !amd64

package sandbox

// vforks: elsewhere than amd64 the command is forked as its init was
// (vfork_linux_amd64.go).
const vforks = false

func vforkClone(uintptr) (uintptr, uintptr) { return 0, 38 } // ENOSYS; never called
