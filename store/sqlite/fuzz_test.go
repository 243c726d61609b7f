package sqlite_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/store/sqlite"
)

// FuzzEntryDecode: decoding any body never panics; what decodes has the
// seq of its row and survives an encode-decode round trip unchanged.
func FuzzEntryDecode(f *testing.F) {
	for _, body := range []string{
		`{"uuid":"u","key":"k","kind":"note","time":"2025-01-01T00:00:00Z","text":"hi"}`,
		`{"uuid":"u","key":"k","kind":"assistant","message":{"role":"assistant","content":[` +
			`{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"x"},` +
			`{"type":"tool_use","id":"1","name":"Write","input":{"a":1}}]},"usage":{"input":1,"output":2}}`,
		`{"uuid":"u","kind":"tool_result","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"1","content":"ok"}]},` +
			`"op":{"id":"1","tool":"Bash","input":"x","is_error":true}}`,
		`{"message":{"content":[{"type":"bogus"}]}}`,
		`{"message":{"content":[{"type":"text","text":5}]}}`,
		`{"message":{"content":[null]}}`,
		`{"message":null,"op":null,"usage":null}`,
		`{"time":"not a time"}`,
		`{"uuid": `,
		`null`,
		`[]`,
		``,
	} {
		f.Add(int64(1), []byte(body))
	}
	f.Fuzz(func(t *testing.T, seq int64, body []byte) {
		e, err := sqlite.DecodeEntry(seq, body)
		if err != nil {
			return
		}
		if e.Seq != seq {
			t.Fatalf("seq = %d, want %d", e.Seq, seq)
		}
		again, err := json.Marshal(e)
		if err != nil {
			return // e.g. a time whose year JSON cannot hold: refused on write, not a decode bug
		}
		e2, err := sqlite.DecodeEntry(seq, again)
		if err != nil {
			t.Fatalf("re-encoded entry does not decode: %v\n%s", err, again)
		}
		if d := cmp.Diff(normal(t, again), normal(t, mustMarshal(t, e2))); d != "" {
			t.Fatalf("round trip changed the entry (-first +second):\n%s", d)
		}
	})
}

// normal is a JSON document as a generic value, so that key order and
// spacing do not count.
func normal(t *testing.T, b []byte) any {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return v
}

func mustMarshal(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
