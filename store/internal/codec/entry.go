package codec

import (
	"fmt"

	"github.com/flower-run/flower/store"
)

// DecodeEntry decodes a body column. Garbage is an error naming the seq,
// never a panic: a damaged row must halt loudly, not crash the runtime.
func DecodeEntry(seq int64, body string) (store.Entry, error) {
	e, err := decodeBody(body)
	if err != nil {
		return store.Entry{}, fmt.Errorf("decode entry seq %d: %w", seq, err)
	}
	if e.UUID == "" || e.Key == "" || e.Kind == "" { // Append refuses such an entry
		return store.Entry{}, fmt.Errorf("decode entry seq %d: key, uuid or kind missing", seq)
	}
	e.Seq = seq
	return e, nil
}
