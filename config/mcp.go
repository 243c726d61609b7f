package config

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
)

// MCP is the mcp: key of flower.yaml: MCP servers in the shape of Claude
// Code's .mcp.json (command, args, env | type: http, url, headers), plus
// what flower adds: the op class of each tool and a call timeout.
//
//	mcp:
//	  timeout: 120             # seconds a call may take (default 300)
//	  servers:
//	    github:
//	      type: http
//	      url: https://api.githubcopilot.com/mcp/
//	      headers: {Authorization: "Bearer ${GITHUB_TOKEN}"}
//	      class: {"*": effect, get_issue: pure}
//	    files:                 # a server of .mcp.json: only its classes
//	      class: {write_file: idempotent}
//
// Package mcp merges it over the workspace's .mcp.json (mcp.FromConfig).
// The type carries no behaviour so that another config file (the
// user-level one) can hold the same key and share this parsing.
type MCP struct {
	Timeout float64              `yaml:"timeout"`
	Servers map[string]MCPServer `yaml:"servers"`
}

// MCPServer is one server, or flower's settings for a server that
// .mcp.json declares. ${VAR} in command, args, env, url and headers is
// read from the environment when the server starts, never stored.
type MCPServer struct {
	Type     string             `yaml:"type"` // stdio (default), http, sse
	Command  string             `yaml:"command"`
	Args     []string           `yaml:"args"`
	Env      map[string]string  `yaml:"env"`
	URL      string             `yaml:"url"`
	Headers  map[string]string  `yaml:"headers"`
	Class    map[string]OpClass `yaml:"class"` // tool name or "*" -> class
	Timeout  float64            `yaml:"timeout"`
	Disabled bool               `yaml:"disabled"`
}

// OpClass overrides the class an MCP server's annotations claim for a
// tool: annotations are hints from an untrusted server.
type OpClass string

// The op classes a tool may be given.
const (
	ClassPure       OpClass = "pure"       // re-run if a crash cuts it; no intent recorded
	ClassEffect     OpClass = "effect"     // intent before the call; ambiguous after a crash
	ClassIdempotent OpClass = "idempotent" // an effect that may be repeated without harm
)

const classChoices = "pure, effect or idempotent"

// UnmarshalYAML refuses an unknown class at its own line and column.
func (c *OpClass) UnmarshalYAML(node ast.Node) error {
	s, ok := node.(*ast.StringNode)
	if !ok {
		return &valueError{node: node, msg: fmt.Sprintf("got %s, want a class (%s)", kindOf(node), classChoices)}
	}
	switch got := OpClass(s.Value); got {
	case ClassPure, ClassEffect, ClassIdempotent:
		*c = got
		return nil
	}
	return &valueError{node: node, msg: fmt.Sprintf("unknown class %q (%s)", s.Value, classChoices)}
}
