package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/flower-run/flower/tool"
	"github.com/flower-run/flower/tool/builtin"
)

// The cost of one tool call as the agent makes it: an MCP call over stdio
// (server-everything's echo, node), over Streamable HTTP (a Go SDK server
// on loopback), and the built-in Read of a small file, for the ratio.
// Record with: go test -run '^$' -bench Call -benchtime 2000x ./mcp

func benchCall(b *testing.B, tl tool.Tool, input string) {
	ctx := tool.WithCall(context.Background(), "toolu_bench")
	in := json.RawMessage(input)
	b.ResetTimer()
	for range b.N {
		res, err := tl.Run(ctx, in)
		if err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

func BenchmarkCallStdio(b *testing.B) {
	index := npmServer(b, "server-everything")
	set := New([]Server{{Name: "every", Command: "node", Args: []string{index}}}, Options{Workspace: b.TempDir()})
	defer set.Close()
	reg := tool.NewRegistry(set.Tools(context.Background())...)
	benchCall(b, reg["mcp__every__echo"], `{"message":"hello"}`)
}

func BenchmarkCallHTTP(b *testing.B) {
	_, url := newDedupServer(b)
	set := New([]Server{{Name: "pay", Type: "http", URL: url}}, Options{})
	defer set.Close()
	reg := tool.NewRegistry(set.Tools(context.Background())...)
	benchCall(b, reg["mcp__pay__charge"], `{"cents":1}`)
}

func BenchmarkCallBuiltinRead(b *testing.B) {
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	reg := tool.NewRegistry(builtin.Builtins(builtin.Env{Workspace: ws})...)
	benchCall(b, reg["Read"], `{"file_path":"a.txt"}`)
}

// BenchmarkTools is what the runtime pays per model call to refresh the
// tools of a running set (cached; no request to the servers).
func BenchmarkTools(b *testing.B) {
	_, url := newDedupServer(b)
	set := New([]Server{{Name: "pay", Type: "http", URL: url}}, Options{})
	defer set.Close()
	ctx := context.Background()
	set.Tools(ctx)
	b.ResetTimer()
	for range b.N {
		if len(set.Tools(ctx)) != 1 {
			b.Fatal("tools")
		}
	}
}
