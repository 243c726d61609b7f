package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/store"
)

func mustPutMeta(t *testing.T, s store.Store, m store.Meta) {
	t.Helper()
	if err := s.PutMeta(context.Background(), m); err != nil {
		t.Fatalf("PutMeta(%q): %v", m.Key, err)
	}
}

// testMeta: meta is a description, so the latest put wins.
func testMeta(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, ok, err := s.Meta(ctx, "p/s"); ok || err != nil {
		t.Fatalf("Meta of a missing key: ok=%v err=%v, want false, nil", ok, err)
	}
	first := store.Meta{Key: "p/s", Agent: "work", Model: "m1", Workspace: "/w", Created: t0}
	second := store.Meta{Key: "p/s", Agent: "work", Model: "m2", ForkOf: "p/r", Created: t0.Add(time.Hour)}
	for _, want := range []store.Meta{first, second} {
		mustPutMeta(t, s, want)
		got, ok, err := s.Meta(ctx, "p/s")
		if err != nil || !ok {
			t.Fatalf("Meta: ok=%v err=%v", ok, err)
		}
		if d := cmp.Diff(want, got, cmpOpts); d != "" {
			t.Errorf("Meta mismatch (-want +got):\n%s", d)
		}
	}
	if _, ok, _ := s.Meta(ctx, "p/s/sub"); ok {
		t.Error("Meta(p/s/sub) found the meta of p/s")
	}
	if err := s.PutMeta(ctx, store.Meta{Created: t0}); err == nil {
		t.Error("PutMeta without a key = nil, want an error")
	}
}

// testSessions: keys under a prefix, oldest first. The keys hold '_' and
// '%' and differ only there, so a store that matches with an unescaped
// LIKE fails.
func testSessions(t *testing.T, s store.Store) {
	at := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	for _, m := range []store.Meta{
		{Key: "-w-a/s1", Created: at(2)},
		{Key: "-w-a/s2", Created: at(0)},
		{Key: "-w-a/s3", Created: at(1)},
		{Key: "-w-a/s2/task-1", Created: at(3)},
		{Key: "-w-ab/s4", Created: at(-1)},
		{Key: "-w_a/s5", Created: at(-2)},
		{Key: "-w%a/s6", Created: at(-3)},
		{Key: "-w-b/s7", Created: at(-4)},
	} {
		mustPutMeta(t, s, m)
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"-w-a/", []string{"-w-a/s2", "-w-a/s3", "-w-a/s1", "-w-a/s2/task-1"}},
		{"-w-a", []string{"-w-ab/s4", "-w-a/s2", "-w-a/s3", "-w-a/s1", "-w-a/s2/task-1"}},
		{"-w-a/s2", []string{"-w-a/s2", "-w-a/s2/task-1"}},
		{"-w_a/", []string{"-w_a/s5"}},
		{"-w%a/", []string{"-w%a/s6"}},
		{"-w_", []string{"-w_a/s5"}},
		{"-w-c/", nil},
		{"", []string{"-w-b/s7", "-w%a/s6", "-w_a/s5", "-w-ab/s4", "-w-a/s2", "-w-a/s3", "-w-a/s1", "-w-a/s2/task-1"}},
	}
	for _, tt := range tests {
		checkSessions(t, s, tt.prefix, tt.want)
	}
	// A later put moves a session to its new creation time.
	mustPutMeta(t, s, store.Meta{Key: "-w-a/s2", Created: at(9)})
	checkSessions(t, s, "-w-a/", []string{"-w-a/s3", "-w-a/s1", "-w-a/s2/task-1", "-w-a/s2"})
}

func checkSessions(t *testing.T, s store.Store, prefix string, want []string) {
	t.Helper()
	metas, err := s.Sessions(context.Background(), prefix)
	if err != nil {
		t.Fatalf("Sessions(%q): %v", prefix, err)
	}
	var got []string
	for _, m := range metas {
		got = append(got, m.Key)
	}
	if d := cmp.Diff(want, got, cmpOpts); d != "" {
		t.Errorf("Sessions(%q) keys (-want +got):\n%s", prefix, d)
	}
}

// testSummary: summaries accumulate; the latest is current, per key.
func testSummary(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, ok, err := s.Summary(ctx, "p/s"); ok || err != nil {
		t.Fatalf("Summary of a missing key: ok=%v err=%v, want false, nil", ok, err)
	}
	for _, p := range []struct{ key, text string }{
		{"p/s", "first"}, {"p/s/sub", "of the subagent"}, {"p/s", "second"}, {"p/t", "other"},
	} {
		if err := s.PutSummary(ctx, p.key, p.text); err != nil {
			t.Fatalf("PutSummary(%q): %v", p.key, err)
		}
	}
	for key, want := range map[string]string{"p/s": "second", "p/s/sub": "of the subagent", "p/t": "other"} {
		got, ok, err := s.Summary(ctx, key)
		if err != nil || !ok || got != want {
			t.Errorf("Summary(%q) = %q, %v, %v; want %q, true, nil", key, got, ok, err, want)
		}
	}
	if _, ok, _ := s.Summary(ctx, "p"); ok {
		t.Error("Summary(p) found a summary of a longer key")
	}
}

// testCommitMeta: a batch's meta commits with its entries, all or none, and
// the latest wins as with PutMeta.
func testCommitMeta(t *testing.T, s store.Store) {
	ctx := context.Background()
	m := store.Meta{Key: "p/s", Agent: "work", Model: "m1", Workspace: "/w", Created: t0}
	stored := entry("p/r", 0)
	mustAppend(t, s, stored)
	refused := store.Batch{Meta: []store.Meta{m}, Entries: []store.Entry{entry("p/s", 0), stored}}
	if err := s.Commit(ctx, refused); !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("Commit with a stored uuid = %v, want ErrDuplicate", err)
	}
	if _, ok, err := s.Meta(ctx, "p/s"); ok || err != nil {
		t.Fatalf("Meta after a refused batch: ok=%v err=%v, want false, nil", ok, err)
	}
	if err := s.Commit(ctx, store.Batch{Meta: []store.Meta{{Created: t0}}}); err == nil {
		t.Error("Commit of a meta without a key = nil, want an error")
	}
	mustCommit(t, s, store.Batch{Meta: []store.Meta{m}, Entries: chain("p/s", 0, 2)})
	got, ok, err := s.Meta(ctx, "p/s")
	if err != nil || !ok {
		t.Fatalf("Meta: ok=%v err=%v", ok, err)
	}
	if d := cmp.Diff(m, got, cmpOpts); d != "" {
		t.Errorf("Meta mismatch (-want +got):\n%s", d)
	}
	diffEntries(t, "p/s", mustLoad(t, s, "p/s"), chain("p/s", 0, 2))
	checkSessions(t, s, "p/", []string{"p/s"})
	m.Model = "m2"
	mustCommit(t, s, store.Batch{Meta: []store.Meta{m}})
	if got, _, _ := s.Meta(ctx, "p/s"); got.Model != "m2" {
		t.Errorf("Meta after a second commit has model %q, want m2", got.Model)
	}
}
