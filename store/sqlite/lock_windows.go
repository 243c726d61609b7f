package sqlite

import (
	"os"

	"golang.org/x/sys/windows"
)

// On Windows the lock is LockFileEx on the file's first byte: held while
// the handle stays open, released by the system when the process dies.
// Testing it takes a shared lock for an instant, as flock does elsewhere.

func lockRange(f *os.File, flags uint32) error {
	ol := new(windows.Overlapped)
	return windows.LockFileEx(windows.Handle(f.Fd()), flags|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
}

func lockFD(f *os.File) error { return lockRange(f, windows.LOCKFILE_EXCLUSIVE_LOCK) }

func unlockFD(f *os.File) {
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}

func lockedFD(f *os.File) bool {
	if lockRange(f, 0) != nil {
		return true
	}
	unlockFD(f)
	return false
}
