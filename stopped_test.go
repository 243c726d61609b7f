package flower

import (
	"encoding/json"
	"testing"

	"github.com/flower-run/flower/store"
)

// TestCutCall: the call named is the last one with an intent and no
// result, by its command or path (issue 23).
func TestCutCall(t *testing.T) {
	op := func(kind store.Kind, id, tool, input string) store.Entry {
		return store.Entry{Kind: kind, Op: &store.Op{ID: id, Tool: tool, Input: json.RawMessage(input)}}
	}
	entries := []store.Entry{
		op(store.KindOpStarted, "a", "Write", `{"file_path":"a.txt","content":"x"}`),
		op(store.KindResult, "a", "Write", ``),
		op(store.KindOpStarted, "b", "Bash", `{"command":"npm   test"}`),
	}
	if got := cutCall(entries); got != "Bash (npm test)" {
		t.Errorf("cutCall = %q, want Bash (npm test)", got)
	}
	if got := cutCall(entries[:2]); got != "" {
		t.Errorf("cutCall with every result in = %q, want nothing", got)
	}
}
