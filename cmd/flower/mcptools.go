package main

import (
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/mcp"
	"github.com/flower-run/flower/tool"
)

// mcpServers reads the workspace's MCP servers (.mcp.json with flower.yaml's
// mcp: over it) as a tool source for the runtime. Nothing starts here:
// the servers start when the first step asks for its tools, and report
// their banner line (or a failure) to out then. The returned close stops
// them; sources is nil when no server is configured.
func mcpServers(ws string, cfg config.Config, box *containment, out io.Writer) (sources []tool.Source, closeAll func(), err error) {
	abs, err := filepath.Abs(ws)
	if err != nil {
		return nil, nil, usageErr("--workspace: %v", err)
	}
	servers, err := mcp.Load(abs, cfg.MCP)
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	if len(servers) == 0 {
		return nil, func() {}, nil
	}
	var mu sync.Mutex // serializes lines from servers starting concurrently
	set := mcp.New(servers, mcp.Options{Workspace: abs, Contain: mcpContain(box.sandbox), Report: func(line string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(out, line)
	}})
	return []tool.Source{set}, func() { _ = set.Close() }, nil
}
