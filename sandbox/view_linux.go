package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The mount view (issue 20): the helper's mount namespace, which every
// command's namespace copies, is changed once, before any command runs,
// so that what commands see is a view rather than only an allow list:
//
//   - the hidden directories (flower's state: the run dir, the state
//     home) are covered by an empty read-only tmpfs: not there at all;
//   - the protected paths (Protected: flower.yaml, .mcp.json, .claude/,
//     .git/hooks, .git/config...) are bind-mounted read-only onto
//     themselves: readable, but not writable, renamable or removable (a
//     mount point is busy), whatever Landlock allows around them;
//   - /dev/pts is a new devpts instance of the namespace's own, with
//     /dev/ptmx its multiplexer: a command may still open a pseudo
//     terminal of its own, but no terminal of the person's (/dev/pts/N)
//     exists there.
//
// Commands cannot undo it: they hold no capability (dropPrivileges).

// applyView changes this process's mount namespace as described above.
// Missing paths are skipped: a mount needs a mount point (WatchProtected
// covers those).
func applyView(hide, protect []string) error {
	for _, d := range hide {
		if !exists(d) {
			continue
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555"); err != nil {
			return fmt.Errorf("hide %s: %w", d, err)
		}
	}
	for _, p := range protect {
		real, err := filepath.EvalSymlinks(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			// Nothing to mount on; or a path flower itself cannot reach
			// (a home directory of another user's), nor can its commands.
			continue
		}
		if err != nil {
			return fmt.Errorf("protect %s: %w", p, err)
		}
		if err := bindReadOnly(real); err != nil {
			return fmt.Errorf("protect %s: %w", p, err)
		}
	}
	return privateTerminals()
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// bindReadOnly mounts p read-only onto itself. The remount keeps the
// flags of the mount p is on (nosuid, nodev...): in a user namespace the
// kernel refuses to clear flags locked by the outer one.
func bindReadOnly(p string) error {
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for st1, ms := range map[int64]uintptr{unix.ST_NOSUID: unix.MS_NOSUID, unix.ST_NODEV: unix.MS_NODEV,
		unix.ST_NOEXEC: unix.MS_NOEXEC, unix.ST_NOATIME: unix.MS_NOATIME, unix.ST_NODIRATIME: unix.MS_NODIRATIME,
		unix.ST_RELATIME: unix.MS_RELATIME} {
		if int64(st.Flags)&st1 != 0 { // int32 on 32-bit machines
			flags |= ms
		}
	}
	return unix.Mount("", p, "", flags, "")
}

// privateTerminals gives the namespace a devpts instance of its own, so
// that the person's terminals are not there; where that cannot be
// mounted, /dev/pts is hidden instead.
func privateTerminals() error {
	if !exists("/dev/pts") {
		return nil
	}
	err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
	if err != nil {
		if err := unix.Mount("tmpfs", "/dev/pts", "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555"); err != nil {
			return fmt.Errorf("hide /dev/pts: %w", err)
		}
		return nil
	}
	// Best effort: without it, /dev/ptmx opens terminals of the outer
	// instance, new ones, never the person's.
	_ = unix.Mount("/dev/pts/ptmx", "/dev/ptmx", "", unix.MS_BIND, "")
	return nil
}
