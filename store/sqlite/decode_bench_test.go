package sqlite_test

import (
	"encoding/json"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// BenchmarkDecode10k decodes the bodies of a realistic 10,000-entry session
// in memory, without SQLite, in each format considered for the body column:
//
//   - json: the entry as one JSON document, the message nested in it
//     (the first format; encoding/json scans the message twice);
//   - json-split: the message in a column of its own, so each document is
//     parsed once;
//   - binary: the length-prefixed format of doc.go (the one in use).
func BenchmarkDecode10k(b *testing.B) {
	entries := realistic("-home-me-proj/s", 10_000, 1)
	b.Run("json", func(b *testing.B) {
		bodies := make([][]byte, len(entries))
		size := 0
		for i, e := range entries {
			bodies[i], _ = json.Marshal(e)
			size += len(bodies[i])
		}
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, body := range bodies {
				var e store.Entry
				if err := json.Unmarshal(body, &e); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("json-split", func(b *testing.B) {
		rest, msgs := make([][]byte, len(entries)), make([][]byte, len(entries))
		size := 0
		for i, e := range entries {
			if e.Message != nil {
				msgs[i], _ = json.Marshal(e.Message)
				e.Message = nil
			}
			rest[i], _ = json.Marshal(e)
			size += len(rest[i]) + len(msgs[i])
		}
		b.SetBytes(int64(size))
		for b.Loop() {
			for i := range rest {
				var e store.Entry
				if err := json.Unmarshal(rest[i], &e); err != nil {
					b.Fatal(err)
				}
				if msgs[i] != nil {
					e.Message = new(model.Message)
					if err := e.Message.UnmarshalJSON(msgs[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	})
	b.Run("binary", func(b *testing.B) {
		bodies := make([]string, len(entries)) // Load gets each as a string
		size := 0
		for i := range entries {
			body, _ := sqlite.AppendBody(nil, &entries[i])
			bodies[i] = string(body)
			size += len(body)
		}
		b.SetBytes(int64(size))
		for b.Loop() {
			for i, body := range bodies {
				if _, err := sqlite.DecodeEntry(int64(i+1), body); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
