package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/tool"
)

// IdempotencyKey is the _meta key under which a call carries its op id
// (the model's tool_use id, the id of its intent in the store). A call run
// again after a crash carries the same key, so a server that dedupes by it
// turns "at most twice" into exactly once.
const IdempotencyKey = "idempotencyKey"

// Tool is one tool of an MCP server, as a flower tool.
type Tool struct {
	srv   *server
	def   *sdk.Tool
	opts  *Options
	name  string
	class config.OpClass
}

var (
	_ tool.Tool       = (*Tool)(nil)
	_ tool.Idempotent = (*Tool)(nil)
)

func newTool(srv *server, def *sdk.Tool, opts *Options) *Tool {
	return &Tool{srv: srv, def: def, opts: opts, name: ToolName(srv.cfg.Name, def.Name),
		class: classOf(def, srv.cfg.Class)}
}

// classOf is the tool's op class: the config's word for this tool, then
// for the whole server ("*"), then the server's annotations: readOnlyHint
// is pure, idempotentHint an idempotent effect, anything else an effect.
func classOf(def *sdk.Tool, override map[string]config.OpClass) config.OpClass {
	if c, ok := override[def.Name]; ok {
		return c
	}
	if c, ok := override["*"]; ok {
		return c
	}
	a := def.Annotations
	switch {
	case a != nil && a.ReadOnlyHint:
		return config.ClassPure
	case a != nil && a.IdempotentHint:
		return config.ClassIdempotent
	}
	return config.ClassEffect
}

func (t *Tool) Name() string { return t.name }

func (t *Tool) Description() string {
	if t.def.Description != "" {
		return t.def.Description
	}
	return fmt.Sprintf("The %s tool of the MCP server %s.", t.def.Name, t.srv.cfg.Name)
}

// Schema is the server's input schema, as the server sent it.
func (t *Tool) Schema() json.RawMessage {
	if t.def.InputSchema == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	b, err := json.Marshal(t.def.InputSchema)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return b
}

func (t *Tool) Class() tool.Class {
	if t.class == config.ClassPure {
		return tool.Pure
	}
	return tool.Effect
}

func (t *Tool) Idempotent() bool { return t.class == config.ClassIdempotent }

// Run calls the tool. A failure of the server (down, timed out, a
// protocol error) is a result the model sees; only a cancelled ctx (an
// interrupt, flower stopping) is a Go error, and cancelling ctx cancels the
// call on the server.
func (t *Tool) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	cs, _, err := t.srv.ensure(ctx)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage(`{}`)
	}
	timeout := t.srv.cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	params := &sdk.CallToolParams{Name: t.def.Name, Arguments: input}
	if id := tool.CallID(ctx); id != "" {
		params.Meta = sdk.Meta{IdempotencyKey: id}
	}
	res, err := cs.CallTool(cctx, params)
	switch {
	case ctx.Err() != nil:
		return tool.Result{Content: cutNote, IsError: true}, fmt.Errorf("mcp %s: %w", t.name, ctx.Err())
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return tool.Errorf("%s: no answer within %v: the call was cancelled on the server (it may or may not have taken effect)", t.name, timeout), nil
	case err != nil:
		if !answered(err) {
			t.srv.lost(cs, err) // no answer from the server at all: reconnect at the next use
		}
		return tool.Errorf("%s: %v", t.name, t.srv.callError(cs, err)), nil
	}
	return t.result(ctx, res), nil
}

// codeRejected is the SDK's code for a message its transport could not
// deliver (an HTTP server that answers 5xx, say): no server answered.
const codeRejected = -32005

// answered reports whether err is the server's own answer (a JSON-RPC
// error) rather than a failure to reach it.
func answered(err error) bool {
	var wire *jsonrpc.Error
	return errors.As(err, &wire) && wire.Code != codeRejected
}

const cutNote = "[interrupted: the call was cancelled on the MCP server]"

// callError explains a failed call, naming a server that died during it.
func (s *server) callError(cs *sdk.ClientSession, err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != cs && s.lastErr != nil {
		return fmt.Errorf("%w: the server went down during the call (it may or may not have taken effect); it is restarted at the next use: %v", err, s.lastErr)
	}
	return err
}
