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

// TraceEnv names a file to which every hit of Durable appends a line
// saying what was just made durable: a crash suite runs a flow once with
// it to learn how many durable writes there are, then kills flower after
// each (FLOWER_FAILPOINT=durable:N).
const TraceEnv = "FLOWER_FAILPOINT_TRACE"

// DurablePoint is the failpoint hit after every fsync'd store commit and
// every fsync and rename of an atomically replaced file.
const DurablePoint = "durable"

var (
	armed bool         // a failpoint is set in the environment
	name  string       // the armed point
	nth   int64        // the hit that kills (1-based)
	hits  atomic.Int64 // hits of the armed point so far
)

var trace = os.Getenv(TraceEnv) // "" unless a suite counts durable writes

func init() { name, nth, armed = Parse(os.Getenv(Env)) }

// Durable marks that what was just made durable (a commit, an fsync, a
// rename): it records it in the trace file, if one is set, then hits
// DurablePoint.
func Durable(what string) {
	if !armed && trace == "" {
		return
	}
	if trace != "" {
		if f, err := os.OpenFile(trace, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			f.WriteString(what + "\n")
			f.Close()
		}
	}
	Hit(DurablePoint)
}

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
