package headless

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/flower-run/flower/config"
)

// Config is what claude -p's flags add to flower.yaml.
type Config struct {
	Allowed, Disallowed []string // --allowedTools, --disallowedTools: permission rules
	MCPConfigs          []string // --mcp-config: files or JSON texts of {"mcpServers": {...}}
	Strict              bool     // --strict-mcp-config: only the --mcp-config servers
}

// Apply adds the flags' rules and servers to cfg: allowed tools are allow
// rules, disallowed ones deny rules (deny wins, as everywhere). It returns
// the names of servers it left out: the host's in-process ("sdk") servers,
// which flower does not reach.
func (c Config) Apply(cfg *config.Config) (skipped []string, err error) {
	for _, r := range SplitRules(c.Allowed) {
		cfg.Permissions.Allow = append(cfg.Permissions.Allow, config.PermissionRule(r))
	}
	for _, r := range SplitRules(c.Disallowed) {
		cfg.Permissions.Deny = append(cfg.Permissions.Deny, config.PermissionRule(r))
	}
	if c.Strict {
		cfg.MCP.Servers = nil
	}
	for _, text := range c.MCPConfigs {
		servers, err := readMCPConfig(text)
		if err != nil {
			return nil, err
		}
		if cfg.MCP.Servers == nil {
			cfg.MCP.Servers = map[string]config.MCPServer{}
		}
		for name, s := range servers {
			if s.Type == "sdk" {
				skipped = append(skipped, name)
				continue
			}
			cfg.MCP.Servers[name] = config.MCPServer{Type: s.Type, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Headers: s.Headers}
		}
	}
	return skipped, nil
}

// mcpServer is one server of Claude Code's MCP configuration.
type mcpServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// readMCPConfig reads --mcp-config's value: a JSON text, or a file of one.
func readMCPConfig(text string) (map[string]mcpServer, error) {
	src := "--mcp-config"
	data := []byte(text)
	if t := strings.TrimSpace(text); !strings.HasPrefix(t, "{") {
		b, err := os.ReadFile(text)
		if err != nil {
			return nil, fmt.Errorf("--mcp-config %s: %w (give a file or a JSON text {\"mcpServers\": {...}})", text, err)
		}
		src, data = "--mcp-config "+text, b
	}
	var v struct {
		MCPServers map[string]mcpServer `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%s: not the JSON of Claude Code's MCP configuration ({\"mcpServers\": {NAME: {command, args}}}): %w", src, err)
	}
	return v.MCPServers, nil
}

// SplitRules splits tool lists as Claude Code takes them: each value may
// hold several rules separated by commas or spaces, and a rule's
// parentheses may hold either ("Bash(git log:*)").
func SplitRules(values []string) []string {
	var out []string
	for _, v := range values {
		depth, start := 0, 0
		for i, r := range v {
			switch {
			case r == '(':
				depth++
			case r == ')' && depth > 0:
				depth--
			case (r == ',' || r == ' ') && depth == 0:
				if s := strings.TrimSpace(v[start:i]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
		if s := strings.TrimSpace(v[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// SchemaInstructions ask the model for output that --json-schema's
// schema validates, as Claude Code's structured output does.
func SchemaInstructions(schema string) (string, error) {
	var v any
	if err := json.Unmarshal([]byte(schema), &v); err != nil {
		return "", fmt.Errorf("--json-schema: not JSON (%v): give a JSON Schema object", err)
	}
	return "End your final message with one JSON value, and nothing after it, that this JSON Schema validates:\n" + schema, nil
}
