package headless

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flower-run/flower/tool"
)

// The host's in-process MCP servers (the SDK's createSdkMcpServer, type
// "sdk"): flower reaches them over the control protocol, each JSON-RPC
// message in an mcp_message request, and offers their tools as
// mcp__SERVER__TOOL, as Claude Code names them. A tool is an effect
// unless it says readOnlyHint (then it is world: the host's answer may
// change, so it is asked again on resume, never replayed).

// SDKServers is the tool.Source of the host's in-process MCP servers.
func (s *Session) SDKServers() tool.Source { return (*sdkServers)(s) }

type sdkServers Session

// Tools lists each server's tools once (initialize, then tools/list); a
// server that fails is left out and said on Warn.
func (x *sdkServers) Tools(ctx context.Context) []tool.Tool {
	s := (*Session)(x)
	s.mu.Lock()
	names := append([]string(nil), s.sdkNames...)
	s.mu.Unlock()
	var out []tool.Tool
	for _, name := range names {
		ts, err := s.sdkTools(ctx, name)
		if err != nil {
			fmt.Fprintf(s.o.Warn, "flower: the host's MCP server %s: %v\n", name, err)
			continue
		}
		out = append(out, ts...)
	}
	return out
}

// sdkTools are server's tools, listed on the first call.
func (s *Session) sdkTools(ctx context.Context, server string) ([]tool.Tool, error) {
	s.sdkMu.Lock()
	defer s.sdkMu.Unlock()
	if ts, ok := s.sdkListed[server]; ok {
		return ts, nil
	}
	if _, err := s.rpc(ctx, server, "initialize", map[string]any{"protocolVersion": "2025-06-18",
		"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "flower", "version": s.o.Init.Version}}); err != nil {
		return nil, err
	}
	s.notify(server, "notifications/initialized")
	res, err := s.rpc(ctx, server, "tools/list", map[string]any{})
	if err != nil {
		return nil, err
	}
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"inputSchema"`
			Annotations struct {
				ReadOnly bool `json:"readOnlyHint"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	var ts []tool.Tool
	for _, t := range list.Tools {
		class := tool.Effect
		if t.Annotations.ReadOnly {
			class = tool.World
		}
		ts = append(ts, &sdkTool{s: s, server: server, name: t.Name, desc: t.Description, schema: t.Schema, class: class})
	}
	if s.sdkListed == nil {
		s.sdkListed = map[string][]tool.Tool{}
	}
	s.sdkListed[server] = ts
	return ts, nil
}

// rpc sends one JSON-RPC request to server and returns its result.
func (s *Session) rpc(ctx context.Context, server, method string, params any) (json.RawMessage, error) {
	s.mu.Lock()
	s.rpcID++
	id := s.rpcID
	s.mu.Unlock()
	r, err := s.request(ctx, map[string]any{"subtype": "mcp_message", "server_name": server,
		"message": map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}})
	if err != nil {
		return nil, err
	}
	if r.Subtype != "success" {
		return nil, fmt.Errorf("%s: %s", method, strings.TrimSpace(r.Error+" "+r.Subtype))
	}
	var body struct {
		MCP struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		} `json:"mcp_response"`
	}
	if err := json.Unmarshal(r.Response, &body); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if body.MCP.Error != nil {
		return nil, fmt.Errorf("%s: %s", method, body.MCP.Error.Message)
	}
	return body.MCP.Result, nil
}

// notify sends a JSON-RPC notification; its acknowledgement is not awaited.
func (s *Session) notify(server, method string) {
	s.out.write(map[string]any{"type": "control_request", "request_id": "flower-" + newUUID(), "request": map[string]any{
		"subtype": "mcp_message", "server_name": server, "message": map[string]any{"jsonrpc": "2.0", "method": method}}})
}

// sdkTool is one tool of a host's in-process server.
type sdkTool struct {
	s                  *Session
	server, name, desc string
	schema             json.RawMessage
	class              tool.Class
}

func (t *sdkTool) Name() string        { return "mcp__" + t.server + "__" + t.name }
func (t *sdkTool) Description() string { return t.desc }
func (t *sdkTool) Class() tool.Class   { return t.class }

func (t *sdkTool) Schema() json.RawMessage {
	if len(t.schema) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	return t.schema
}

// Run calls the tool (tools/call); its text content is the result.
func (t *sdkTool) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	var args map[string]any
	if len(input) > 0 {
		if err := json.Unmarshal(input, &args); err != nil {
			return tool.Errorf("%s: the input is not a JSON object: %v", t.Name(), err), nil
		}
	}
	res, err := t.s.rpc(ctx, t.server, "tools/call", map[string]any{"name": t.name, "arguments": args})
	if err != nil {
		return tool.Errorf("%s: %v", t.Name(), err), nil
	}
	var out struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return tool.Errorf("%s: %v", t.Name(), err), nil
	}
	var parts []string
	for _, c := range out.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return tool.Result{Content: strings.Join(parts, "\n"), IsError: out.IsError}, nil
}
