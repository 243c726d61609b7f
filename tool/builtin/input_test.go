package builtin

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/flower-run/flower/tool"
)

// TestBadInput: every malformed or incomplete input is an error result
// naming the problem, never a Go error or a panic.
func TestBadInput(t *testing.T) {
	env := testEnv(t)
	byName := tool.NewRegistry(Builtins(env)...)
	tests := []struct {
		tool, input, want string
	}{
		{"Read", `not json`, "must be a JSON object"},
		{"Read", ``, "must be a JSON object"},
		{"Read", `null`, "must be a JSON object"},
		{"Read", `[1]`, "must be a JSON object"},
		{"Read", `{}`, `missing required field "file_path"`},
		{"Read", `{"file_path": null}`, `missing required field "file_path"`},
		{"Read", `{"file_path": 3}`, `field "file_path" must be a string`},
		{"Read", `{"file_path": "a", "offset": "x"}`, `field "offset" must be an integer`},
		{"Read", `{"file_path": "a", "limit": 1.5}`, `field "limit" must be an integer`},
		{"Read", `{"file_path": ""}`, "path is empty"},
		{"Write", `{"file_path": "a"}`, `missing required field "content"`},
		{"Write", `{"content": "x"}`, `missing required field "file_path"`},
		{"Edit", `{"file_path": "a", "old_string": "x"}`, `missing required field "new_string"`},
		{"Edit", `{"file_path": "a", "new_string": "x"}`, `missing required field "old_string"`},
		{"Edit", `{"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": "maybe"}`, `field "replace_all" must be a boolean`},
		{"Glob", `{"path": "."}`, `missing required field "pattern"`},
		{"Grep", `{"path": "."}`, `missing required field "pattern"`},
		{"Grep", `{"pattern": "x", "-i": 7}`, `field "-i" must be a boolean`},
		{"Bash", `{"timeout": 5}`, `missing required field "command"`},
		{"Bash", `{"command": "  "}`, "command is empty"},
		{"Bash", `{"command": "true", "timeout": "soon"}`, `field "timeout" must be an integer`},
		{"WebFetch", `{"prompt": "x"}`, `missing required field "url"`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.input, func(t *testing.T) {
			res, err := byName[tt.tool].Run(context.Background(), json.RawMessage(tt.input))
			if err != nil {
				t.Fatalf("Go error %v, want an error result", err)
			}
			wantError(t, res, tt.want)
		})
	}
}

// TestLenientInput: numbers and booleans sent as strings or as 10.0 are
// understood, and unknown fields are ignored.
func TestLenientInput(t *testing.T) {
	tests := []struct {
		input      string
		wantOffset int
		wantLimit  int
	}{
		{`{"file_path": "a", "offset": 3, "limit": 10}`, 3, 10},
		{`{"file_path": "a", "offset": "3", "limit": 10.0}`, 3, 10},
		{`{"file_path": "a", "extra": {"x": 1}}`, 0, 0},
	}
	for _, tt := range tests {
		var in readInput
		if err := decodeInput(json.RawMessage(tt.input), &in, "file_path"); err != nil {
			t.Fatalf("decodeInput(%s): %v", tt.input, err)
		}
		if int(in.Offset) != tt.wantOffset || int(in.Limit) != tt.wantLimit {
			t.Errorf("decodeInput(%s) = offset %d limit %d, want %d %d", tt.input, in.Offset, in.Limit, tt.wantOffset, tt.wantLimit)
		}
	}
	var g grepInput
	if err := decodeInput(json.RawMessage(`{"pattern": "x", "-i": "true"}`), &g, "pattern"); err != nil || !g.IgnoreCase {
		t.Errorf(`"-i": "true" decoded to %v, %v; want true`, g.IgnoreCase, err)
	}
}

// TestCancelledContext: a context cancelled before the call is a runtime
// failure, reported as a Go error by every tool.
func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tl := range Builtins(testEnv(t)) {
		if _, err := tl.Run(ctx, json.RawMessage(`{}`)); err == nil {
			t.Errorf("%s.Run with cancelled context: err = nil, want context.Canceled", tl.Name())
		}
	}
}
