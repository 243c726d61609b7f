//go:build unix && !linux

package sqlite

import (
	"os"
	"syscall"
)

// Elsewhere the lock is an flock; testing it takes it for an instant.

func lockFD(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

func unlockFD(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

func lockedFD(f *os.File) bool {
	if syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
