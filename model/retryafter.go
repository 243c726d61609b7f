package model

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter reads how long a server asked the client to wait, from
// retry-after-ms, else retry-after (seconds or an HTTP date). Both
// providers send these; 0 means none, or a value no Duration can hold.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if d, ok := duration(h.Get("retry-after-ms"), time.Millisecond); ok {
		return d
	}
	v := h.Get("retry-after")
	if d, ok := duration(v, time.Second); ok {
		return d
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// duration parses a count of units, refusing values no Duration can hold.
func duration(v string, unit time.Duration) (time.Duration, bool) {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(n > 0) || n >= float64(math.MaxInt64)/float64(unit) {
		return 0, false
	}
	return time.Duration(n * float64(unit)), true
}
