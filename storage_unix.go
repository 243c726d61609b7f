//go:build unix

package flower

import (
	"path/filepath"
	"syscall"
)

// freeBytes is the space an unprivileged writer has left on the filesystem
// of dir, or of its nearest existing parent.
func freeBytes(dir string) (uint64, bool) {
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Statfs_t
		if syscall.Statfs(d, &st) == nil {
			return uint64(st.Bavail) * uint64(st.Bsize), true
		}
		if d == filepath.Dir(d) {
			return 0, false
		}
	}
}
