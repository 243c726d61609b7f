package web

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// A flood of accept errors prints one line, then their count at the end.
func TestAcceptErrorsAreLoggedOnceWithACount(t *testing.T) {
	var out bytes.Buffer
	e, logger := newErrorLog(&out)
	for i := range 110 {
		logger.Printf("http: Accept error: accept tcp 127.0.0.1:1: accept4: too many open files; retrying in %dms", i)
	}
	logger.Printf("http: TLS handshake error from x")
	e.summary()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "too many open files") || !strings.Contains(lines[2], fmt.Sprint(110)) {
		t.Errorf("log:\n%s\nwant the first accept error, the other line, and the count 110", out.String())
	}
}
