package storetest

import (
	"context"
	"testing"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// testStats: a backend's own Stats (store.Stater) agrees with StatsOf the
// loaded session: entries of exactly the key, last seq, responses and
// their cost, the first prompt (a user entry without a message skipped).
func testStats(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, ok := s.(store.Stater); !ok {
		t.Skip("the store has no Stats of its own: flower sessions loads each session")
	}
	if got, err := store.ReadStats(ctx, s, "p/none"); err != nil || got != (store.Stats{}) {
		t.Fatalf("Stats of a missing session = %+v, %v", got, err)
	}
	entries := append([]store.Entry{{UUID: "u0", Key: "p/s", Kind: store.KindUser, Time: t0}}, session("p/s")...)
	entries[1].Parent = "u0"
	more := session("p/s")[1:2]
	more[0].UUID, more[0].Parent, more[0].Cost = "u2b", "u9", 0.5
	more[0].Message = &model.Message{Role: model.Assistant, Content: []model.Block{&model.Text{Text: "again"}}}
	mustAppend(t, s, entries...)
	sub := session("p/s/sub")
	for i := range sub {
		sub[i].UUID += "s"
		if sub[i].Parent != "" {
			sub[i].Parent += "s"
		}
	}
	mustAppend(t, s, sub...)
	mustAppend(t, s, more[0])
	got, err := store.ReadStats(ctx, s, "p/s")
	if err != nil {
		t.Fatal(err)
	}
	want := store.StatsOf(mustLoad(t, s, "p/s"))
	if want.Turns != 2 || want.Entries != len(entries)+1 || want.Prompt == "" {
		t.Fatalf("StatsOf = %+v: the test's session is not what it meant", want)
	}
	if got.Entries != want.Entries || got.LastSeq != want.LastSeq || got.Turns != want.Turns || got.Prompt != want.Prompt ||
		got.Cost < want.Cost-1e-12 || got.Cost > want.Cost+1e-12 {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
	for key, want := range map[string]int64{"p/s": want.LastSeq, "p/none": 0} {
		if got, err := store.ReadLastSeq(ctx, s, key); err != nil || got != want {
			t.Errorf("ReadLastSeq(%s) = %d, %v; want %d", key, got, err, want)
		}
	}
}
