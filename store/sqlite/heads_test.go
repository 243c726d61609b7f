package sqlite_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// cutBody is body as a heads query returns it: its first and last bytes.
func cutBody(body string, over, head int) string {
	cutAbove, prefix, tail := sqlite.HeadSpans(over, head)
	if len(body) <= cutAbove {
		return body
	}
	return body[:prefix] + body[len(body)-tail:]
}

// TestDecodeHead: a cut body decodes to its entry with the content's head
// and whole length, or fails (to be read whole): never a wrong entry.
// Every content length around the cut and every op flag are tried.
func TestDecodeHead(t *testing.T) {
	const over, head = 600, 100
	for n := over - 3; n < over+1500; n += 7 {
		for flags := range 8 {
			e := store.Entry{UUID: "u", Key: "k", Kind: store.KindResult,
				Op: &store.Op{ID: "t", Tool: "Read", Content: strings.Repeat("é🌸x", n)[:n],
					IsError: flags&1 != 0, Denied: flags&2 != 0, Cut: flags&4 != 0}}
			body := encodeBody(t, e)
			got, err := sqlite.DecodeHead(7, cutBody(body, over, head), len(body), over, head)
			if err != nil {
				if n > over+sqlite.PrefixSpan {
					t.Fatalf("content of %d bytes: %v", n, err)
				}
				continue
			}
			want := e
			want.Seq = 7
			if op := *e.Op; got.Op.Partial() {
				op.Content, op.Size = op.Content[:head], n
				want.Op = &op
			}
			if d := cmp.Diff(want, got, bodyOpts); d != "" {
				t.Fatalf("content of %d bytes, flags %d (-want +got):\n%s", n, flags, d)
			}
		}
	}
}

// FuzzDecodeHead: garbage, cut or not, never panics, and what decodes
// holds no more content than the body had.
func FuzzDecodeHead(f *testing.F) {
	for _, e := range bodySamples() {
		f.Add(encodeBody(f, e), 5000)
	}
	f.Fuzz(func(t *testing.T, body string, size int) {
		e, err := sqlite.DecodeHead(1, body, size, 600, 100)
		if err == nil && e.Op != nil && len(e.Op.Content) > len(body) {
			t.Fatalf("content of %d bytes from a body of %d", len(e.Op.Content), len(body))
		}
	})
}
