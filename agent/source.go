package agent

import (
	"context"
	"maps"

	"github.com/flower-run/flower/tool"
)

// refreshTools sets the tools this session sees: the runtime's registry
// plus the current tools of its sources (MCP servers). It runs when the
// session opens, so that the calls a crash left pending find their tools,
// and before every model call, so that a source's changed list (an MCP
// server's tools/list_changed) reaches the next request. A source's tool
// never replaces a registered one of the same name.
func (s *session) refreshTools(ctx context.Context) {
	if len(s.rt.sources) == 0 {
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
