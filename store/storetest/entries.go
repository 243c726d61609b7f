package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// session is one of each entry kind, shaped as the agent loop writes them,
// with every block type and the awkward characters a transcript holds.
func session(key string) []store.Entry {
	at := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	input := json.RawMessage(`{"file_path":"/w/a.go","content":"package a\n","n":[1,2.5,null]}`)
	return []store.Entry{
		{UUID: "u1", Key: key, Kind: store.KindUser, Time: at(0),
			Message: &model.Message{Role: model.User, Content: []model.Block{
				&model.Text{Text: "write a.go — «quoted» \"json\" \\ \x00 nul, emoji 🌸"},
			}}},
		{UUID: "u2", Parent: "u1", Key: key, Kind: store.KindAssistant, Time: at(1),
			Message: &model.Message{Role: model.Assistant, Content: []model.Block{
				&model.Thinking{Thinking: "plan", Signature: "sig=="},
				&model.Thinking{Redacted: "opaque"},
				&model.Text{Text: "writing"},
				&model.ToolUse{ID: "tu1", Name: "Write", Input: input},
				&model.ToolUse{ID: "tu2", Name: "Read", Input: json.RawMessage(`{}`)},
			}},
			Model: "claude-x", StopReason: model.StopToolUse, Cost: 0.0123,
			Usage: &model.Usage{Input: 10, Output: 20, CacheRead: 30, CacheCreation: 40}},
		{UUID: "u3", Parent: "u2", Key: key, Kind: store.KindOpStarted, Time: at(1),
			Op: &store.Op{ID: "tu1", Tool: "Write", Input: input, Class: "effect"}},
		{UUID: "u4", Parent: "u3", Key: key, Kind: store.KindResult, Time: at(2),
			Op: &store.Op{ID: "tu1", Tool: "Write", Content: "wrote 10 bytes"},
			Message: &model.Message{Role: model.User, Content: []model.Block{
				&model.ToolResult{ToolUseID: "tu1", Content: "wrote 10 bytes"},
				&model.ToolResult{ToolUseID: "tu2", Content: "no such file", IsError: true},
			}}},
		{UUID: "u5", Parent: "u4", Key: key, Kind: store.KindResult, Time: at(3),
			Op: &store.Op{ID: "tu3", Tool: "Bash", Content: "denied: Bash is not allowed", IsError: true, Denied: true}},
		{UUID: "u6", Parent: "u5", Key: key, Kind: store.KindAPIError, Time: at(4), Text: "overloaded_error"},
		{UUID: "u7", Parent: "u6", Key: key, Kind: store.KindInterrupt, Time: at(5).In(time.FixedZone("CEST", 2*3600)), Text: "stop"},
		{UUID: "u8", Parent: "u7", Key: key, Kind: store.KindHandoff, Time: at(6), Text: "# Handoff\n\n" + strings.Repeat("done; ", 2000)},
		{UUID: "u9", Parent: "u8", Key: key, Kind: store.KindNote, Time: at(7), Text: "resumed",
			Message: &model.Message{Role: model.User}},
	}
}

func testRoundTrip(t *testing.T, s store.Store) {
	key := "-w-proj/0b7e2a8c-sess"
	want := session(key)
	mustAppend(t, s, want[:3]...) // a response and its intent, together
	for _, e := range want[3:] {
		mustAppend(t, s, e)
	}
	diffEntries(t, key, mustLoad(t, s, key), want)
}

// testOrder interleaves three keys in batches of varied size: each key
// gets its entries back in append order.
func testOrder(t *testing.T, s store.Store) {
	keys := []string{"p/a", "p/b", "p/c"}
	want := map[string][]store.Entry{}
	next := map[string]int{}
	for i := range 90 {
		key := keys[i%len(keys)]
		batch := chain(key, next[key], 1+i%4)
		next[key] += len(batch)
		want[key] = append(want[key], batch...)
		mustAppend(t, s, batch...)
	}
	for _, key := range keys {
		diffEntries(t, key, mustLoad(t, s, key), want[key])
	}
}

// testKeyIsolation: Load matches the key exactly. A subagent's transcript
// under a sub-path is another session, and SQL wildcards in a key are
// plain characters.
func testKeyIsolation(t *testing.T, s store.Store) {
	keys := []string{"a/b", "a/b/sub", "a/b/sub/deeper", "a/b/", "a/bc", "a/b_", "a/b%", "a_b", "A/B", "a/b "}
	for i, key := range keys {
		mustAppend(t, s, chain(key, 0, i+1)...)
	}
	for i, key := range keys {
		diffEntries(t, key, mustLoad(t, s, key), chain(key, 0, i+1))
	}
}

func testLoadMissing(t *testing.T, s store.Store) {
	mustAppend(t, s, entry("a/b", 0))
	for _, key := range []string{"a", "a/", "a/b/c", "", "%", "_/_"} {
		if got := mustLoad(t, s, key); len(got) != 0 {
			t.Errorf("Load(%q) = %d entries, want none", key, len(got))
		}
	}
}

func testAppendNothing(t *testing.T, s store.Store) {
	if err := s.Append(context.Background()); err != nil {
		t.Fatalf("Append() = %v, want nil", err)
	}
}

// testDuplicate: a uuid already written, in any key, or twice in one batch,
// refuses the whole batch with ErrDuplicate; the store stays usable.
func testDuplicate(t *testing.T, s store.Store) {
	mustAppend(t, s, chain("k/one", 0, 2)...)
	stored := entry("k/one", 1)
	other := stored
	other.Key, other.Text = "k/two", "same uuid, other key"
	tests := []struct {
		name  string
		batch []store.Entry
	}{
		{"stored uuid", []store.Entry{stored}},
		{"stored uuid in another key", []store.Entry{other}},
		{"after a new entry", []store.Entry{entry("k/two", 0), stored}},
		{"twice in the batch", []store.Entry{entry("k/two", 0), entry("k/two", 1), entry("k/two", 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Append(context.Background(), tt.batch...)
			if !errors.Is(err, store.ErrDuplicate) {
				t.Fatalf("Append = %v, want ErrDuplicate", err)
			}
			diffEntries(t, "k/one", mustLoad(t, s, "k/one"), chain("k/one", 0, 2))
			diffEntries(t, "k/two", mustLoad(t, s, "k/two"), nil)
		})
	}
	mustAppend(t, s, entry("k/one", 2))
	diffEntries(t, "k/one", mustLoad(t, s, "k/one"), chain("k/one", 0, 3))
}

// testInvalid: an entry without key, uuid or kind is refused, and so is
// the rest of its batch.
func testInvalid(t *testing.T, s store.Store) {
	tests := []struct {
		name  string
		spoil func(*store.Entry)
	}{
		{"no key", func(e *store.Entry) { e.Key = "" }},
		{"no uuid", func(e *store.Entry) { e.UUID = "" }},
		{"no kind", func(e *store.Entry) { e.Kind = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := entry("k", 1)
			tt.spoil(&bad)
			if err := s.Append(context.Background(), entry("k", 0), bad); err == nil {
				t.Fatal("Append = nil, want an error")
			}
			diffEntries(t, "k", mustLoad(t, s, "k"), nil)
		})
	}
}

// testCancelled: an Append whose context is already done writes nothing
// and says so.
func testCancelled(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Append(ctx, chain("k", 0, 2)...); err == nil {
		t.Fatal("Append with a cancelled context = nil, want an error")
	}
	diffEntries(t, "k", mustLoad(t, s, "k"), nil)
}

func testLast(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, ok, err := s.Last(ctx, "p/none", store.KindAssistant); ok || err != nil {
		t.Fatalf("Last of a missing session: ok=%v err=%v", ok, err)
	}
	entries := session("p/s") // user, assistant, ... in order
	mustAppend(t, s, entries...)
	want := -1
	for i, e := range entries {
		if e.Kind == store.KindAssistant {
			want = i
		}
	}
	got, ok, err := s.Last(ctx, "p/s", store.KindAssistant)
	if err != nil || !ok || got.UUID != entries[want].UUID {
		t.Fatalf("Last assistant = %q ok=%v err=%v, want %q", got.UUID, ok, err, entries[want].UUID)
	}
	if _, ok, _ := s.Last(ctx, "p/s/sub", store.KindAssistant); ok {
		t.Fatal("Last reached into a sub-path key")
	}
}
