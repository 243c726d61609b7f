package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// crashClone copies a live store's database and WAL files into a new
// directory, as a crash would leave them: no clean close, no checkpoint,
// no -shm (SQLite rebuilds it from the WAL). cut changes the WAL copy.
func crashClone(t *testing.T, path string, cut func(wal []byte) []byte) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "sessions.db")
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if suffix == "-wal" {
			data = cut(data)
		}
		writeFile(t, dst+suffix, data)
	}
	return dst
}

// walStore appends n single-entry transactions and leaves the store open,
// so its WAL holds them all.
func walStore(t *testing.T, n int) (path string, want []store.Entry) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "sessions.db")
	db := open(t, path)
	want = notes("k", 0, n)
	for _, e := range want {
		appendAll(t, db, e)
	}
	return path, want
}

// TestTornWAL: a WAL whose tail was torn by a crash, or followed by
// garbage, loses at most the transaction it tore. Opening succeeds, the
// committed prefix is intact and appends continue.
func TestTornWAL(t *testing.T) {
	const n = 20
	path, want := walStore(t, n)
	tests := []struct {
		name string
		cut  func([]byte) []byte
		want int // entries that survive
	}{
		{"intact", func(b []byte) []byte { return b }, n},
		{"garbage after the tail", func(b []byte) []byte { return append(b, "torn garbage"...) }, n},
		{"last 3 bytes torn", func(b []byte) []byte { return b[:len(b)-3] }, n - 1},
		{"last frame half written", func(b []byte) []byte { return b[:len(b)-2048] }, n - 1},
		{"only the header", func(b []byte) []byte { return b[:32] }, 0},
		{"empty", func(b []byte) []byte { return nil }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := open(t, crashClone(t, path, tt.cut))
			checkPrefix(t, db, want, tt.want)
		})
	}
}

// TestTornWALEveryOffset cuts the WAL at many offsets, inside frames and
// on their edges: each cut keeps a prefix, and a longer WAL never keeps
// less.
func TestTornWALEveryOffset(t *testing.T) {
	const n = 8
	path, want := walStore(t, n)
	size := fileSize(t, path+"-wal")
	last := n + 1
	for cut := size; cut >= 0; cut -= 2053 { // about half a 4 KiB frame, drifting across frame edges
		db := open(t, crashClone(t, path, func(b []byte) []byte { return b[:cut] }))
		got := checkPrefix(t, db, want, -1)
		if got > last {
			t.Fatalf("cut at %d kept %d entries, a longer WAL kept %d", cut, got, last)
		}
		last = got
		db.Close()
	}
}

// checkPrefix checks that db holds a prefix of want (exactly survive long
// unless survive < 0), that appending still works, and returns the length.
func checkPrefix(t *testing.T, db *sqlite.DB, want []store.Entry, survive int) int {
	t.Helper()
	got := uuids(load(t, db, "k"))
	if survive >= 0 && len(got) != survive {
		t.Errorf("%d entries survived, want %d", len(got), survive)
	}
	if len(got) > len(want) || !cmp.Equal(got, uuids(want[:len(got)])) {
		t.Fatalf("survivors are not a prefix: %v", got)
	}
	appendAll(t, db, note("k", 100))
	if after := load(t, db, "k"); len(after) != len(got)+1 {
		t.Errorf("after an append: %d entries, want %d", len(after), len(got)+1)
	}
	return len(got)
}

func fileSize(t *testing.T, path string) int {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return int(fi.Size())
}

// TestConcurrentHandles: two handles on one file, as two flower processes
// would have, append at once from several goroutines; nothing is lost.
func TestConcurrentHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	dbs := []*sqlite.DB{open(t, path), open(t, path)}
	const writers, appends = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, len(dbs)*writers)
	for d, db := range dbs {
		for w := range writers {
			wg.Go(func() {
				key := fmt.Sprintf("k/%d-%d", d, w)
				for i := range appends {
					batch := []store.Entry{note(key, 2*i), note(key, 2*i+1)}
					shared := note("shared", 0)
					shared.UUID = fmt.Sprintf("%s@%d", key, i)
					if err := db.Append(context.Background(), append(batch, shared)...); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Append: %v", err)
	}
	for d := range dbs {
		for w := range writers {
			key := fmt.Sprintf("k/%d-%d", d, w)
			if got, want := uuids(load(t, dbs[1-d], key)), uuids(notes(key, 0, 2*appends)); !cmp.Equal(got, want) {
				t.Errorf("%s read through the other handle: %d entries, want %d", key, len(got), len(want))
			}
		}
	}
	if got, want := len(load(t, dbs[0], "shared")), len(dbs)*writers*appends; got != want {
		t.Errorf("shared key: %d entries, want %d", got, want)
	}
}

// childEnv names the store a re-executed test binary appends to until it is
// killed.
const childEnv = "FLOWER_STORE_KILL_CHILD"

// TestKillDuringAppend kills a real process that appends batches of three
// with SIGKILL, then checks that every acknowledged batch survived and no
// batch survived in part.
func TestKillDuringAppend(t *testing.T) {
	if path := os.Getenv(childEnv); path != "" {
		appendUntilKilled(path)
		return
	}
	path := filepath.Join(t.TempDir(), "sessions.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringAppend$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := func() { cmd.Process.Kill(); cmd.Wait() } // a second call is a no-op
	t.Cleanup(kill)
	acked := readAcks(t, out, 40)
	kill()

	got := load(t, open(t, path), "k")
	if len(got) < 3*acked || len(got)%3 != 0 {
		t.Fatalf("%d entries after the kill; %d batches of 3 were acknowledged", len(got), acked)
	}
	if !cmp.Equal(uuids(got), uuids(notes("k", 0, len(got)))) {
		t.Fatalf("survivors are not the appended prefix: %v", uuids(got))
	}
}

// readAcks reads the child's acknowledgements until it has n, and returns
// the last batch number acknowledged plus one.
func readAcks(t *testing.T, r io.Reader, n int) int {
	t.Helper()
	sc := bufio.NewScanner(r)
	acked := 0
	for acked < n && sc.Scan() {
		i, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "ack "))
		if err != nil {
			continue // test framework chatter
		}
		acked = i + 1
	}
	if acked < n {
		t.Fatalf("child stopped after %d acknowledgements: %v", acked, sc.Err())
	}
	return acked
}

// appendUntilKilled is the child: it appends batches of three and prints
// "ack i" once batch i is durable. The bound only matters if no one kills it.
func appendUntilKilled(path string) {
	db, err := sqlite.Open(path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	for i := range 100000 {
		if err := db.Append(context.Background(), notes("k", 3*i, 3)...); err != nil {
			fmt.Println("append:", err)
			os.Exit(1)
		}
		fmt.Printf("ack %d\n", i)
	}
	os.Exit(0)
}
