package agent

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/flower-run/flower/internal/atomicfile"
)

// sealName lists the spill files known whole on disk. A process that
// checked or wrote spill files flushes the file system once (syncfs: one
// call, however many files) and then writes the list, so a later process
// trusts a listed file whose size matches instead of reading it back: the
// first wake after a crash costs O(1) syncs, a later one a Stat per file
// (issue 12). The list ends with a CRC-32 of the lines before it: a list
// torn by a crash fails it and is ignored, and every file is then read
// back once, as without a list.
const sealName = ".sealed"

// sealedSizes reads the list of ws's spill directory once per process.
func (r *Runtime) sealedSizes() map[string]int64 {
	r.spillMu.Lock()
	defer r.spillMu.Unlock()
	if r.sealed == nil {
		r.sealed = readSeal(filepath.Join(r.workspace, spillDir, sealName))
	}
	return r.sealed
}

func readSeal(path string) map[string]int64 {
	out := map[string]int64{}
	data, err := os.ReadFile(path)
	i := bytes.LastIndex(data, []byte("crc32 "))
	if err != nil || i < 0 || strings.TrimSpace(string(data[i+6:])) != fmt.Sprintf("%08x", crc32.ChecksumIEEE(data[:i])) {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(data[:i]))
	for sc.Scan() {
		size, name, ok := strings.Cut(sc.Text(), " ")
		if n, err := strconv.ParseInt(size, 10, 64); ok && err == nil {
			out[name] = n
		}
	}
	return out
}

// seal makes the spill files this process wrote or checked durable with one
// syncfs and lists them, when any is not listed yet. It is best effort: a
// spill file is derived data, and without a list the next process reads
// the files back.
func (r *Runtime) seal() {
	dir := filepath.Join(r.workspace, spillDir)
	sealed := r.sealedSizes()
	r.spillMu.Lock()
	defer r.spillMu.Unlock()
	fresh := false
	for abs, size := range r.spilledSize {
		if s, ok := sealed[filepath.Base(abs)]; !ok || s != size {
			fresh = true
		}
	}
	if !fresh || syncfs(dir) != nil {
		return
	}
	for abs, size := range r.spilledSize {
		sealed[filepath.Base(abs)] = size
	}
	names := make([]string, 0, len(sealed))
	for n := range sealed {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(&b, "%d %s\n", sealed[n], n)
	}
	fmt.Fprintf(&b, "crc32 %08x\n", crc32.ChecksumIEEE(b.Bytes()))
	_ = atomicfile.WriteFileUnsynced(filepath.Join(dir, sealName), b.Bytes(), 0o644)
}

// unseal forgets the list before a listed file is written again (it went
// missing or changed size): a crash must not leave the list vouching for
// a new, unsynced copy. Removing the list is made durable; this happens
// only when someone touched the spill directory.
func (r *Runtime) unseal(name string) {
	sealed := r.sealedSizes()
	r.spillMu.Lock()
	defer r.spillMu.Unlock()
	if _, ok := sealed[name]; !ok {
		return
	}
	dir := filepath.Join(r.workspace, spillDir)
	if err := os.Remove(filepath.Join(dir, sealName)); err == nil {
		_ = atomicfile.SyncDir(dir)
	}
	clear(sealed)
}
