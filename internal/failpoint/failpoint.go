// Package failpoint lets crash tests kill flower at a named point of its
// work. A failpoint is armed by the environment of the process:
//
//	FLOWER_FAILPOINT=after-effect      the first hit of after-effect
//	FLOWER_FAILPOINT=after-effect:3    the third hit
//
// When the armed point is hit, the process SIGKILLs itself at once: no
// deferred function, no flush, no signal handler runs, exactly as if the
// machine had lost the process there (DESIGN.md §5). The environment is
// read once, at start; with FLOWER_FAILPOINT unset a hit is one load of a
// bool, so the calls stay in production code.
package failpoint

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// Env is the variable that arms a failpoint.
const Env = "FLOWER_FAILPOINT"

var (
	armed bool         // a failpoint is set in the environment
	name  string       // the armed point
	nth   int64        // the hit that kills (1-based)
	hits  atomic.Int64 // hits of the armed point so far
)

func init() { name, nth, armed = Parse(os.Getenv(Env)) }

// Parse reads a FLOWER_FAILPOINT value: "name" or "name:N" with N >= 1.
// Anything else (empty, N not a positive number) arms nothing.
func Parse(v string) (point string, n int64, ok bool) {
	point, count, hasCount := strings.Cut(strings.TrimSpace(v), ":")
	if point == "" {
		return "", 0, false
	}
	n = 1
	if hasCount {
		var err error
		if n, err = strconv.ParseInt(count, 10, 64); err != nil || n < 1 {
			return "", 0, false
		}
	}
	return point, n, true
}

// Hit marks that the process reached the point called point. If it is the
// armed point and this is its Nth hit, the process dies by SIGKILL before
// Hit returns.
func Hit(point string) {
	if !armed || point != name {
		return
	}
	if hits.Add(1) == nth {
		killSelf()
	}
}
