package sqlite

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// SweepBuilds removes the files of new stores that a killed process was
// building beside path (create: path + ".new-*", with their -wal, -shm
// and -journal) and returns their names (issue 22 item 5). The caller
// holds the run dir's lock, so no other process is building one now.
func SweepBuilds(path string) []string {
	var gone []string
	for _, name := range Builds(path) {
		if os.Remove(filepath.Join(filepath.Dir(path), name)) == nil {
			if !strings.HasSuffix(name, "-wal") && !strings.HasSuffix(name, "-shm") && !strings.HasSuffix(name, "-journal") {
				gone = append(gone, name)
			}
		}
	}
	return gone
}

// Builds lists, and leaves, the files of new stores a killed process was
// building beside path, with their -wal, -shm and -journal.
func Builds(path string) []string {
	dir, base := filepath.Split(path)
	build := regexp.MustCompile(`^` + regexp.QuoteMeta(base) + `\.new-[0-9]+(-wal|-shm|-journal)?$`)
	entries, err := os.ReadDir(filepath.Clean(dir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if build.MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}
