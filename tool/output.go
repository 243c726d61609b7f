package tool

import (
	"fmt"
	"strings"
)

// CapWriter keeps the first and last bytes of a stream and counts the rest:
// a command's beginning (what it did) and end (how it failed) matter most,
// and memory stays bounded however much it prints. Not safe for concurrent
// use; Bash feeds it from one goroutine.
type CapWriter struct {
	half  int    // bytes kept at each end
	head  []byte // the first half bytes
	tail  []byte // the latest bytes, trimmed to half when it reaches 2*half
	total int64
}

func NewCapWriter(limit int) *CapWriter {
	return &CapWriter{half: max(limit/2, 1)}
}

func (w *CapWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.total += int64(n)
	if room := w.half - len(w.head); room > 0 {
		k := min(room, len(p))
		w.head = append(w.head, p[:k]...)
		p = p[k:]
	}
	w.tail = append(w.tail, p...)
	if len(w.tail) > 2*w.half {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-w.half:]...)
	}
	return n, nil
}

// String is the kept text, with a marker where bytes were cut. Invalid
// UTF-8, including a character split by the cut, becomes U+FFFD.
func (w *CapWriter) String() string {
	tail := w.tail
	if len(tail) > w.half {
		tail = tail[len(tail)-w.half:]
	}
	cut := w.total - int64(len(w.head)) - int64(len(tail))
	if cut == 0 {
		return strings.ToValidUTF8(string(w.head)+string(tail), "\uFFFD")
	}
	return strings.ToValidUTF8(string(w.head), "\uFFFD") +
		fmt.Sprintf("\n… %d bytes cut …\n", cut) +
		strings.ToValidUTF8(string(tail), "\uFFFD")
}
