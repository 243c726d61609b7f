package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMCP(t *testing.T) { // issue 13
	data := `mcp:
  timeout: 30
  servers:
    files:
      command: npx
      args: [-y, server-filesystem, .]
      env: {DEBUG: "1"}
      class: {"*": effect, read_file: pure}
    github:
      type: http
      url: https://example.com/mcp
      headers: {Authorization: "Bearer ${GITHUB_TOKEN}"}
      class: {create_issue: idempotent}
      timeout: 5
`
	got, err := Parse("flower.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := MCP{Timeout: 30, Servers: map[string]MCPServer{
		"files": {Command: "npx", Args: []string{"-y", "server-filesystem", "."}, Env: map[string]string{"DEBUG": "1"},
			Class: map[string]OpClass{"*": ClassEffect, "read_file": ClassPure}},
		"github": {Type: "http", URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${GITHUB_TOKEN}"},
			Class: map[string]OpClass{"create_issue": ClassIdempotent}, Timeout: 5},
	}}
	if diff := cmp.Diff(want, got.MCP); diff != "" {
		t.Errorf("mcp (-want +got):\n%s", diff)
	}
}

func TestParseMCPErrors(t *testing.T) {
	tests := []struct{ data, want string }{
		{"mcp:\n  servers:\n    x:\n      class: {a: nope}\n", `flower.yaml:4:18: mcp.servers.x.class.a: unknown class "nope" (pure, effect or idempotent)`},
		{"mcp:\n  servers:\n    x:\n      comand: npx\n", "comand"},
		{"mcp:\n  server: {}\n", "server"},
	}
	for _, tt := range tests {
		_, err := Parse("flower.yaml", []byte(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v, want one line containing %q", tt.data, err, tt.want)
		}
	}
}
