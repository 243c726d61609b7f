// Package mcp offers the tools of MCP servers to flower's agents, over the
// official Go SDK: stdio servers run as child processes that die with
// flower, Streamable HTTP servers are reached with headers read from the
// environment. Each tool appears as mcp__<server>__<tool> with the
// server's input schema, and declares an op class (tool.Class), so an MCP
// call follows the same write-ahead path as a built-in: a pure call is
// run again if a crash cuts it, an effect has its intent durable before
// the call and is resolved by the resume policy after a crash.
//
// Servers come from the workspace's .mcp.json, in Claude Code's format,
// and from the mcp: key of flower.yaml (package config), which may also
// override the class a server's annotations claim (they are hints from
// an untrusted server).
package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flower-run/flower/config"
)

// FileName is Claude Code's project MCP file, at the workspace root.
const FileName = ".mcp.json"

// DefaultTimeout bounds one tool call when the config names no timeout.
const DefaultTimeout = 5 * time.Minute

// Server is one MCP server. Values may hold ${VAR} or ${VAR:-default}:
// they are expanded from the environment when the server starts, so a
// token named there is never written to the store, the events or a file.
type Server struct {
	Name    string            `json:"-"`
	Type    string            `json:"type,omitempty"` // stdio (default), http, sse
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Class overrides the op class of a tool ("*": every tool of the
	// server); values are config.ClassPure, ClassEffect, ClassIdempotent.
	Class    map[string]config.OpClass `json:"-"`
	Timeout  time.Duration             `json:"-"` // per call; 0: DefaultTimeout
	Disabled bool                      `json:"-"`
}

// Remote reports whether the server is reached over HTTP.
func (s Server) Remote() bool {
	return s.Type == "http" || s.Type == "sse" || s.Type == "streamable-http"
}

// check names what is wrong with a server, in one line.
func (s Server) check() error {
	switch s.Type {
	case "", "stdio":
		if s.Command == "" {
			return fmt.Errorf("server %q: no command (give command and args, or type http and url)", s.Name)
		}
	case "http", "sse", "streamable-http":
		if s.URL == "" {
			return fmt.Errorf("server %q: type %s needs a url", s.Name, s.Type)
		}
	default:
		return fmt.Errorf("server %q: unknown type %q (use stdio, http or sse)", s.Name, s.Type)
	}
	if strings.Contains(s.Name, "__") || s.Name == "" {
		return fmt.Errorf("server %q: a name must be non-empty and hold no \"__\" (tools are named mcp__<server>__<tool>)", s.Name)
	}
	return nil
}

// fileShape is .mcp.json.
type fileShape struct {
	MCPServers map[string]Server `json:"mcpServers"`
}

// LoadFile reads .mcp.json from the workspace root; a workspace without
// one has no servers and no error.
func LoadFile(workspace string) ([]Server, error) {
	name := filepath.Join(workspace, FileName)
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return ParseFile(name, data)
}

// ParseFile decodes the bytes of an .mcp.json; name is shown in errors.
func ParseFile(name string, data []byte) ([]Server, error) {
	var f fileShape
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %v (expected {\"mcpServers\": {\"NAME\": {\"command\": ..., \"args\": [...]}}})", name, err)
	}
	var out []Server
	for n, s := range f.MCPServers {
		s.Name = n
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Merge lays flower.yaml's mcp: key over the servers of .mcp.json: a
// server named in both takes the yaml's class, timeout and disabled, and
// its command or url when the yaml gives one; a server only in the yaml
// is added. The result is sorted by name, without disabled servers.
func Merge(file []Server, c config.MCP) ([]Server, error) {
	byName := map[string]Server{}
	for _, s := range file {
		byName[s.Name] = s
	}
	for name, y := range c.Servers {
		s, ok := byName[name]
		if !ok || y.Command != "" || y.URL != "" {
			s = Server{Name: name, Type: y.Type, Command: y.Command, Args: y.Args, Env: y.Env, URL: y.URL, Headers: y.Headers}
		}
		s.Class, s.Disabled = y.Class, y.Disabled
		if y.Timeout > 0 {
			s.Timeout = seconds(y.Timeout)
		}
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("%s: mcp: %w", config.FileName, err)
		}
		byName[name] = s
	}
	var out []Server
	for _, s := range byName {
		if s.Timeout == 0 && c.Timeout > 0 {
			s.Timeout = seconds(c.Timeout)
		}
		if !s.Disabled {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Load is the servers of a workspace: .mcp.json with flower.yaml's mcp:
// laid over it.
func Load(workspace string, c config.MCP) ([]Server, error) {
	file, err := LoadFile(workspace)
	if err != nil {
		return nil, err
	}
	return Merge(file, c)
}

// expand replaces ${VAR} and ${VAR:-default} from getenv, as Claude Code
// does in .mcp.json. A variable that is unset and has no default is an
// error naming it: a server started with an empty token fails later and
// less clearly.
func expand(s string, getenv func(string) string) (string, error) {
	var missing []string
	out := os.Expand(s, func(v string) string {
		name, def, hasDef := strings.Cut(v, ":-")
		if val := getenv(name); val != "" {
			return val
		}
		if !hasDef {
			missing = append(missing, name)
		}
		return def
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}
