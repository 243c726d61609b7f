package builtin

import (
	"errors"
	"io/fs"
	"os"

	"github.com/flower-run/flower/internal/atomicfile"
)

// newFileMode is the mode of files Write creates; existing files keep theirs.
const newFileMode fs.FileMode = 0o644

// writeAtomic replaces path with data so that a crash at any instant leaves
// either the old file or the new one, never a half-written mix (SPEC §8).
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	return atomicfile.WriteFile(path, data, mode)
}

// existingMode is the permission of the file at path, or newFileMode when
// there is none. A directory is an error: neither Write nor Edit may
// replace one.
func existingMode(path string) (fs.FileMode, bool, error) {
	info, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return newFileMode, false, nil
	case err != nil:
		return 0, false, err
	case info.IsDir():
		return 0, true, errors.New("is a directory, not a file")
	case !info.Mode().IsRegular():
		return 0, true, errors.New("is not a regular file")
	}
	return info.Mode().Perm(), true, nil
}
