package sqlite

import (
	"os"

	"golang.org/x/sys/unix"
)

// The lock is an open-file-description lock on the whole file: held while
// the file stays open, released by the kernel when the process dies, and
// testable with F_OFD_GETLK without taking it (an flock can only be tested
// by taking it, which made a starting flower fail while ps looked).

func wholeFile(typ int16) *unix.Flock_t {
	return &unix.Flock_t{Type: typ, Whence: 0, Start: 0, Len: 0}
}

func lockFD(f *os.File) error {
	return unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, wholeFile(unix.F_WRLCK))
}

func unlockFD(f *os.File) {
	_ = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, wholeFile(unix.F_UNLCK))
}

// lockedFD reports whether another open file description holds the lock.
func lockedFD(f *os.File) bool {
	lk := wholeFile(unix.F_RDLCK)
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, lk); err != nil {
		return false
	}
	return lk.Type != unix.F_UNLCK
}
