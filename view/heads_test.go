package view

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// headsOf is entries as store.Heads.LoadHeads gives them: copies whose
// results over over bytes hold their first head bytes.
func headsOf(entries []store.Entry, over, head int) []store.Entry {
	out := make([]store.Entry, len(entries))
	for i, e := range entries {
		if e.Kind == store.KindResult && e.Op != nil && len(e.Op.Content) > over {
			op := *e.Op
			op.Content, op.Size = op.Content[:head], len(op.Content)
			e.Op = &op
		}
		out[i] = e
	}
	return out
}

// TestTrimHeads: a session loaded with its large results cut to the head
// the view keeps shows exactly what the whole session shows, whatever
// UTF-8 sequence the head ends in; cut, one-shot and current-run results
// too.
func TestTrimHeads(t *testing.T) {
	trim := &Trim{Spill: func(op *store.Op) (string, error) { return ".flower/results/" + op.ID + ".txt", nil }}
	over, head := trim.Heads()
	for pad := range 4 { // the head ends on each byte of a 4-byte sequence
		text := strings.Repeat("a", head-pad) + strings.Repeat("🌸 éx", over)
		entries := []store.Entry{user("go"),
			bash("big", "cat big"), res("big", text, nil),
			bash("ls", "ls"), res("ls", text, nil),
			bash("cut", "make"), res("cut", text, func(op *store.Op) { op.Cut = true }),
			bash("small", "make"), res("small", "built", nil)}
		o := Options{KeepDenials: 1, Old: len(entries), Trim: trim, Settled: true}
		want := BuildWith(entries, o)
		if got := NewBuilder(headsOf(entries, over, head), o).Messages(); !reflect.DeepEqual(got, want) {
			t.Fatalf("pad %d: heads %s\nwhole %s", pad, render(got), render(want))
		}
	}
}

// TestTrimHeadsSpillFails: when the rest of a partial result cannot be had
// the view says so, and never passes the head off as the whole result.
func TestTrimHeadsSpillFails(t *testing.T) {
	trim := &Trim{Spill: func(*store.Op) (string, error) { return "", errors.New("disk full") }}
	over, head := trim.Heads()
	entries := headsOf([]store.Entry{user("go"), bash("big", "cat big"), res("big", strings.Repeat("x", 2*over), nil)}, over, head)
	msgs := BuildWith(entries, Options{Old: len(entries), Trim: trim})
	got := msgs[len(msgs)-1].Content[0].(*model.ToolResult).Content
	if !strings.HasPrefix(got, fmt.Sprintf("[trimmed: this result was %d bytes; its full text could not be written to a file (disk full)", 2*over)) ||
		!strings.HasSuffix(got, "\n"+strings.Repeat("x", head)+"\n[…]") {
		t.Fatalf("result shown as %q", got)
	}
}
