package mcp

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/config"
)

func TestParseFile(t *testing.T) { // Claude Code's .mcp.json
	data := `{"mcpServers": {
  "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": {"A": "1"}},
  "gh": {"type": "http", "url": "https://x/mcp", "headers": {"Authorization": "Bearer ${T}"}}
}}`
	got, err := ParseFile(".mcp.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{
		{Name: "files", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "."}, Env: map[string]string{"A": "1"}},
		{Name: "gh", Type: "http", URL: "https://x/mcp", Headers: map[string]string{"Authorization": "Bearer ${T}"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseFileErrors(t *testing.T) {
	tests := []struct{ data, want string }{
		{`{"mcpServers": {"x": {}}}`, `.mcp.json: server "x": no command`},
		{`{"mcpServers": {"x": {"type": "ws", "url": "u"}}}`, `unknown type "ws"`},
		{`{"mcpServers": {"x": {"type": "http"}}}`, `type http needs a url`},
		{`{"mcpServers": {"a__b": {"command": "c"}}}`, `no "__"`},
		{`{"mcpServers": [`, `.mcp.json: `},
	}
	for _, tt := range tests {
		_, err := ParseFile(".mcp.json", []byte(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseFile(%s) = %v, want one line with %q", tt.data, err, tt.want)
		}
	}
}

func TestMerge(t *testing.T) {
	file := []Server{{Name: "files", Command: "npx"}, {Name: "old", Command: "x"}}
	c := config.MCP{Timeout: 10, Servers: map[string]config.MCPServer{
		"files": {Class: map[string]config.OpClass{"*": config.ClassPure}, Timeout: 2},
		"old":   {Disabled: true},
		"db":    {Command: "db-mcp", Env: map[string]string{"U": "${DB}"}},
	}}
	got, err := Merge(file, c)
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{
		{Name: "db", Command: "db-mcp", Env: map[string]string{"U": "${DB}"}, Timeout: 10 * time.Second},
		{Name: "files", Command: "npx", Class: map[string]config.OpClass{"*": config.ClassPure}, Timeout: 2 * time.Second},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := Merge(nil, config.MCP{Servers: map[string]config.MCPServer{"x": {Timeout: 3}}}); err == nil ||
		!strings.Contains(err.Error(), `flower.yaml: mcp: server "x": no command`) {
		t.Errorf("a yaml-only server without a command: %v", err)
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"T": "tok"}
	getenv := func(k string) string { return env[k] }
	for in, want := range map[string]string{"Bearer ${T}": "Bearer tok", "${NO:-def}": "def", "${T:-def}": "tok", "plain": "plain"} {
		if got, err := expand(in, getenv); err != nil || got != want {
			t.Errorf("expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := expand("${A} ${B}", getenv); err == nil || err.Error() != "environment variable A, B is not set" {
		t.Errorf("unset: %v", err)
	}
}
