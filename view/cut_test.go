package view

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// TestCutJoinsALaterLoad holds Builder.Cut to its promise (the wake's
// snapshot, issue 12): for a session loaded, then grown, the view of the
// later load is the loaded view's messages before the cut followed by the
// view of the entries from the cut on, built alone, whenever the session
// stayed linear and no denial came after a cut that has one before it.
func TestCutJoinsALaterLoad(t *testing.T) {
	trim := &Trim{MinSize: 1000, Spill: func(op *store.Op) (string, error) { return ".flower/results/" + op.ID + ".txt", nil }}
	seeds, joined := 2000, 0
	if testing.Short() {
		seeds = 400
	}
	for seed := range seeds {
		if checkCut(t, int64(seed), trim) {
			joined++
		}
	}
	if joined < seeds/4 { // the test must not pass by finding no cuts
		t.Fatalf("only %d of %d sessions had a cut to join", joined, seeds)
	}
}

func checkCut(t *testing.T, seed int64, trim *Trim) bool {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	entries := linearSession(r, 2+r.Intn(80))
	loaded := 1 + r.Intn(len(entries))
	o := Options{KeepDenials: 1, Old: loaded}
	if r.Intn(2) == 0 {
		o.Trim = trim
	}
	b := NewBuilder(entries[:loaded], o)
	c, ok := b.Cut()
	if !ok {
		return false
	}
	if e := entries[c.Entry]; c.Entry >= loaded || e.Kind != store.KindAssistant {
		t.Fatalf("seed %d: cut at entry %d (%s) of %d loaded", seed, c.Entry, e.Kind, loaded)
	}
	kept := append([]model.Message(nil), b.Messages()[:c.Msgs]...)
	later := Options{KeepDenials: 1, Old: len(entries), Trim: o.Trim}
	tail := entries[c.Entry:]
	if !c.Joins(tail) {
		if !hasDenial(tail) {
			t.Fatalf("seed %d: a cut refuses a linear tail without denials", seed)
		}
		return false
	}
	want := BuildWith(entries, later)
	tailOpts := later
	tailOpts.Old, tailOpts.Joined = len(tail), true
	got := append(kept, NewBuilder(tail, tailOpts).Messages()...)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("seed %d, loaded %d, cut %+v:\njoined %s\nwhole  %s", seed, loaded, c, render(got), render(want))
	}
	return true
}

// linearSession is randomSession with every entry's parent the one before.
func linearSession(r *rand.Rand, n int) []store.Entry {
	es := randomSession(r, n)
	for i := 1; i < len(es); i++ {
		es[i].Parent = es[i-1].UUID
	}
	return es
}

func hasDenial(es []store.Entry) bool { // hasDenial reports whether es hold a denied result.
	for _, e := range es {
		if e.Kind == store.KindResult && e.Op != nil && e.Op.Denied {
			return true
		}
	}
	return false
}

// TestNoCutInANewPart: entries of this run (from Old on) are shown whole,
// as a later load would not show them, so no cut has one before it.
func TestNoCutInANewPart(t *testing.T) {
	entries := []store.Entry{user("go"), bash("a", "make"), res("a", "built", nil), bash("b", "make"), res("b", "built", nil)}
	for i := 1; i < len(entries); i++ {
		entries[i].Parent = entries[i-1].UUID
	}
	b := NewBuilder(entries, Options{KeepDenials: 1, Old: 2})
	if c, ok := b.Cut(); !ok || c.Entry != 1 || c.Msgs != 1 {
		t.Fatalf("cut = %+v, %v; want entry 1 after 1 message: entries after Old are shown whole", c, ok)
	}
	b = NewBuilder(entries, Options{KeepDenials: 1, Old: 4})
	if c, ok := b.Cut(); !ok || c.Entry != 3 || c.Msgs != 3 {
		t.Fatalf("cut = %+v, %v; want entry 3 after 3 messages", c, ok)
	}
}
