package model

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMessageRoundTrip(t *testing.T) {
	in := Message{Role: Assistant, Content: []Block{
		&Thinking{Thinking: "hm", Signature: "sig"},
		&Text{Text: "hi"},
		&ToolUse{ID: "t1", Name: "Read", Input: json.RawMessage(`{"file_path":"a"}`)},
		&ToolResult{ToolUseID: "t1", Content: "x", IsError: true},
	}}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var got Message
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
}

func FuzzMessageDecode(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":[{"type":"text","text":"a"}]}`))
	f.Add([]byte(`{"role":"user","content":[{"type":"zzz"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Message
		_ = json.Unmarshal(data, &m) // must never panic
	})
}

func TestContextAndCost(t *testing.T) {
	u := Usage{Input: 100, Output: 10, CacheRead: 1000, CacheCreation: 50}
	if got, want := u.Context(), 1150; got != want {
		t.Fatalf("Context()=%d, want %d", got, want)
	}
	info, ok := Lookup("claude-sonnet-4-6")
	if !ok {
		t.Fatal("claude-sonnet-4-6 unknown")
	}
	got := info.Cost(Usage{Input: 1_000_000})
	if got != 3 {
		t.Fatalf("Cost=%v, want 3", got)
	}
	if _, ok := Lookup("llama3"); ok {
		t.Fatal("llama3 should be unknown")
	}
}
