//go:build !unix

package sqlite_test

import "io/fs"

func nlink(fs.FileInfo) uint64 { return 1 }
