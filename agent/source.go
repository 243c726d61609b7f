package agent

import (
	"context"
	"maps"
	"path"
	"strings"

	"github.com/flower-run/flower/tool"
)

// refreshTools sets the tools this session sees: the runtime's registry
// plus the current tools of its sources (MCP servers). It runs when the
// session opens, so that the calls a crash left pending find their tools,
// and before every model call, so that a source's changed list (an MCP
// server's tools/list_changed) reaches the next request. A source's tool
// never replaces a registered one of the same name.
func (s *session) refreshTools(ctx context.Context) {
	if len(s.rt.sources) == 0 || !s.mayUseSources() {
		s.reg = s.rt.tools
		return
	}
	reg := maps.Clone(s.rt.tools)
	for _, src := range s.rt.sources {
		for _, t := range src.Tools(ctx) {
			if _, taken := reg[t.Name()]; !taken {
				reg[t.Name()] = t
			}
		}
	}
	s.reg = reg
}

// idempotent reports whether the call's tool declares its calls
// idempotent (tool.Idempotent).
func (s *session) idempotent(name string) bool {
	t, ok := s.reg[name]
	return ok && tool.IsIdempotent(t)
}

// allows reports whether the spec lets the agent use the tool. Spec.Tools
// names tools, or patterns of them (mcp__github__*, path.Match syntax):
// an MCP server's tools are known only once it runs.
func (s *session) allows(name string) bool {
	if s.allowed == nil || s.allowed[name] {
		return true
	}
	for _, p := range s.spec.Tools {
		if strings.ContainsAny(p, "*?[") {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
	}
	return false
}

// mayUseSources reports whether the spec may allow a source's tool: a step
// whose tool set names none (no mcp__ name or pattern) starts no server.
func (s *session) mayUseSources() bool {
	if s.allowed == nil {
		return true
	}
	for _, p := range s.spec.Tools {
		if strings.HasPrefix(p, "mcp__") || strings.HasPrefix(p, "*") {
			return true
		}
	}
	return false
}
