package postgres

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
)

var dbgMu sync.Mutex
var dbgCount = map[string]int{}

func dbg(what string) {
	pc := make([]uintptr, 12)
	n := runtime.Callers(3, pc)
	fr := runtime.CallersFrames(pc[:n])
	var parts []string
	for {
		f, more := fr.Next()
		name := f.Function
		if i := strings.LastIndex(name, "/"); i >= 0 {
			name = name[i+1:]
		}
		if !strings.HasPrefix(name, "postgres.") {
			parts = append(parts, name)
		}
		if len(parts) >= 4 || !more {
			break
		}
	}
	dbgMu.Lock()
	dbgCount[what+" <- "+strings.Join(parts, " <- ")]++
	dbgMu.Unlock()
}

func DebugDump() {
	dbgMu.Lock()
	defer dbgMu.Unlock()
	var ks []string
	for k := range dbgCount {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return dbgCount[ks[i]] > dbgCount[ks[j]] })
	for _, k := range ks {
		fmt.Fprintf(os.Stderr, "%6d %s\n", dbgCount[k], k)
	}
}
