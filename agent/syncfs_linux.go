package agent

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncfs flushes the file system holding dir: every file written to it so
// far is durable once it returns.
func syncfs(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
