package sqlite

import "github.com/flower-run/flower/store"

// EncodeEntry appends the binary body of e (everything but Seq, the format
// drawn in doc.go) to dst. store/postgres keeps the same body in a bytea
// column, so an entry has one encoding whichever backend holds it.
func EncodeEntry(dst []byte, e *store.Entry) ([]byte, error) { return appendBody(dst, e) }

// DecodeEntry decodes a body written by EncodeEntry and gives it seq. A
// damaged body, or one without uuid, key or kind, is an error naming seq.
func DecodeEntry(seq int64, body string) (store.Entry, error) { return decodeEntry(seq, body) }
