//go:build linux && !amd64

package sandbox

// vforks: elsewhere than amd64 the command's init is a fork of the helper
// and forks the command (vfork_linux_amd64.go).
const vforks = false

func vforkClone(uintptr) (uintptr, uintptr) { return 0, 38 } // ENOSYS; never called

func cloneInit(uintptr, uintptr, uintptr, *forkArgs) (uintptr, uintptr) { return 0, 38 } // ENOSYS; never called

const initMainPC = 0

func initStack(*forkArgs) ([]byte, error) { return nil, nil } // never called

func freeStack([]byte) {}

// signals: the forked init ran runtime_AfterForkInChild, so the command
// has nothing to undo.
type signals struct{}

func signalsOf() signals { return signals{} }

func (*signals) reset() {}
