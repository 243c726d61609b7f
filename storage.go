package flower

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
)

// StorageFix says what a person can do about err, a failure to keep state
// in dir: where, why, and the flag or variable that moves the state
// elsewhere; "" when err is no such failure (issue 23).
func StorageFix(err error, dir string) string {
	return storageFix(err, dir, "keep flower's state elsewhere with --run-dir DIR or XDG_STATE_HOME=DIR")
}

// storageFix is StorageFix with the advice that moves the state.
func storageFix(err error, dir, elsewhere string) string {
	if err == nil {
		return ""
	}
	switch {
	case errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "disk is full") ||
		strings.Contains(err.Error(), syscall.ENOSPC.Error()):
		free := ""
		if n, ok := freeBytes(dir); ok {
			free = fmt.Sprintf(" (%s free)", bytesText(n))
		}
		return fmt.Sprintf("the disk holding %s is full%s: free some space, or %s", Tilde(dir), free, elsewhere)
	case errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("%s is not writable: %s", Tilde(dir), elsewhere)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Sprintf("a file stands where %s needs a directory: %s", Tilde(dir), elsewhere)
	}
	return ""
}

// withStorageFix appends StorageFix's advice to err.
func withStorageFix(err error, dir string) error {
	if fix := StorageFix(err, dir); fix != "" {
		return fmt.Errorf("%w: %s", err, fix)
	}
	return err
}

func bytesText(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
