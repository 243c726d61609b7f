package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// headsOf asserts that s loads heads: every backend of this module does.
func headsOf(t *testing.T, s store.Store) store.Heads {
	t.Helper()
	h, ok := s.(store.Heads)
	if !ok {
		t.Skipf("%T loads no heads (store.Heads is optional: consumers type-assert it)", s)
	}
	return h
}

// Figures of the heads cases: results over headsOver bytes may come cut
// to headsHead bytes.
const (
	headsOver = 4000
	headsHead = 400
)

// headsSession holds results on both sides of the cut, every op flag on a
// large one, a multi-byte character across the head's end, a large input,
// and large entries of other kinds, which are never cut.
func headsSession(key string) []store.Entry {
	big := func(n int) string { return strings.Repeat("line of «output» 🌸\n", n/24+1)[:n] }
	input := json.RawMessage(`{"command":"` + strings.Repeat("x", 3000) + `"}`)
	es := []store.Entry{
		{Kind: store.KindUser, Message: &model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: big(9000)}}}},
		{Kind: store.KindResult, Op: &store.Op{ID: "t1", Tool: "Read", Class: "pure", Content: big(headsOver)}},
		{Kind: store.KindResult, Op: &store.Op{ID: "t2", Tool: "Read", Class: "pure", Content: big(12_000)}},
		{Kind: store.KindResult, Op: &store.Op{ID: "t3", Tool: "Bash", Content: big(250_000), IsError: true, Denied: true, Cut: true}},
		{Kind: store.KindResult, Op: &store.Op{ID: "t4", Tool: "Bash", Input: input, Content: big(headsOver + 1)}},
		{Kind: store.KindNote, Text: big(20_000)},
		{Kind: store.KindResult, Op: &store.Op{ID: "t5", Tool: "Read", Content: "short"}},
	}
	for i := range es {
		e := &es[i]
		e.Key, e.UUID, e.Time = key, key+"#"+string(rune('a'+i)), t0
		if i > 0 {
			e.Parent = es[i-1].UUID
		}
	}
	return es
}

// testHeads: LoadHeads is Load, but for the content of results over the
// cut, which comes whole or as exactly its first head bytes with its whole
// length; a plain large result does come cut, and ResultContent gives its
// whole content back.
func testHeads(t *testing.T, s store.Store) {
	h := headsOf(t, s)
	ctx := context.Background()
	key := "-w-proj/heads"
	mustAppend(t, s, headsSession(key)...)
	whole := mustLoad(t, s, key)
	got, err := h.LoadHeads(ctx, key, headsOver, headsHead)
	if err != nil {
		t.Fatalf("LoadHeads: %v", err)
	}
	if len(got) != len(whole) {
		t.Fatalf("LoadHeads gave %d entries, Load %d", len(got), len(whole))
	}
	for i, g := range got {
		w := whole[i]
		if g.Seq != w.Seq {
			t.Errorf("entry %d: seq %d, Load's %d", i, g.Seq, w.Seq)
		}
		if g.Op != nil && g.Op.Partial() {
			if w.Kind != store.KindResult || len(w.Op.Content) <= headsOver {
				t.Errorf("entry %d (%s, %d bytes) came cut", i, w.Kind, w.Op.Len())
			}
			if g.Op.Size != len(w.Op.Content) || g.Op.Content != w.Op.Content[:headsHead] || g.Op.Len() != w.Op.Len() {
				t.Errorf("entry %d: cut to %d bytes of %d, want the first %d of %d", i, len(g.Op.Content), g.Op.Size, headsHead, len(w.Op.Content))
			}
			op := *g.Op
			op.Content, op.Size = w.Op.Content, 0
			g.Op = &op
		}
		if d := cmp.Diff(w, g, cmpOpts); d != "" {
			t.Errorf("entry %d differs from Load's (-Load +LoadHeads):\n%s", i, d)
		}
	}
	for _, i := range []int{2, 3} { // plain large results: a store that never cuts saves nothing
		if !got[i].Op.Partial() {
			t.Errorf("entry %d, a result of %d bytes, came whole", i, len(whole[i].Op.Content))
		}
		c, ok, err := h.ResultContent(ctx, key, got[i].Seq)
		if err != nil || !ok || c != whole[i].Op.Content {
			t.Errorf("ResultContent(entry %d) = %d bytes, %v, %v; want its %d bytes", i, len(c), ok, err, len(whole[i].Op.Content))
		}
	}
	if c, ok, err := h.ResultContent(ctx, "-w-proj/other", got[2].Seq); ok || err != nil || c != "" {
		t.Errorf("ResultContent under another key = %q, %v, %v; want nothing", c, ok, err)
	}
	if _, ok, err := h.ResultContent(ctx, key, got[len(got)-1].Seq+100); ok || err != nil {
		t.Errorf("ResultContent of a missing seq = %v, %v; want not ok", ok, err)
	}
	if _, err := h.LoadHeads(ctx, key, headsHead, headsHead); err == nil {
		t.Error("LoadHeads with head not below over: no error")
	}
}

// testHeadsRefused: an entry whose content is a head cannot be appended,
// nor committed: the rest of its content would be lost.
func testHeadsRefused(t *testing.T, s store.Store) {
	h := headsOf(t, s)
	ctx := context.Background()
	key := "-w-proj/heads"
	mustAppend(t, s, headsSession(key)...)
	got, err := h.LoadHeads(ctx, key, headsOver, headsHead)
	if err != nil {
		t.Fatalf("LoadHeads: %v", err)
	}
	e := got[2]
	e.Key, e.UUID, e.Parent = "-w-proj/fork", "fork#1", ""
	if err := s.Append(ctx, e); !errors.Is(err, store.ErrPartial) {
		t.Errorf("Append of a head: %v, want store.ErrPartial", err)
	}
	if err := s.Commit(ctx, store.Batch{Entries: []store.Entry{entry("-w-proj/fork", 0), e}}); !errors.Is(err, store.ErrPartial) {
		t.Errorf("Commit of a head: %v, want store.ErrPartial", err)
	}
	if n := len(mustLoad(t, s, "-w-proj/fork")); n != 0 {
		t.Errorf("%d entries stored by the refused appends", n)
	}
}
