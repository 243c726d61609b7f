package anthropic

import (
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/flower-run/flower/model"
)

// converted is what a conversation's model.Memo holds for this adapter:
// the messages and tools of the last request with their JSON, so the next
// request encodes only what changed (issue 12). A message is known by its
// blocks' pointers: a view never writes a block after making it.
type converted struct {
	msgs []model.Message // the messages encoded before the last one
	wire [][]byte        // their JSON, without a cache breakpoint

	defs      []model.ToolDef
	markTools bool
	tools     []byte // JSON of the tools
}

// encode returns the JSON of msgs and defs, reusing c. The last message is
// always encoded anew and carries the cache breakpoint; the ones before it
// are c's, so a breakpoint never stays on an older message.
func (c *converted) encode(msgs []model.Message, defs []model.ToolDef, markTools bool) ([][]byte, []byte, error) {
	tools, err := c.encodeTools(defs, markTools)
	if err != nil {
		return nil, nil, err
	}
	k := 0
	for k < len(c.msgs) && k < len(msgs)-1 && sameMessage(c.msgs[k], msgs[k]) {
		k++
	}
	c.msgs, c.wire = c.msgs[:k], c.wire[:k]
	for i := k; i < len(msgs); i++ {
		last := i == len(msgs)-1
		w, err := wireMessage(i, msgs[i], last)
		if err != nil {
			return nil, nil, err
		}
		c.wire = append(c.wire, w)
		if !last {
			c.msgs = append(c.msgs, msgs[i])
		}
	}
	out := c.wire
	c.wire = c.wire[:len(c.msgs)] // the last one is the request's alone
	return out, tools, nil
}

func sameMessage(a, b model.Message) bool {
	if a.Role != b.Role || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if a.Content[i] != b.Content[i] {
			return false
		}
	}
	return true
}

// encodeTools converts and encodes the tool schemas once per
// conversation, not per call.
func (c *converted) encodeTools(defs []model.ToolDef, markLast bool) ([]byte, error) {
	if c.tools != nil && markLast == c.markTools && model.SameTools(c.defs, defs) {
		return c.tools, nil
	}
	if len(defs) == 0 {
		return nil, nil
	}
	ts, err := tools(defs, markLast)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(ts)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encode tools: %w", err)
	}
	c.defs, c.markTools, c.tools = defs, markLast, data
	return data, nil
}

// sdkParams is params with msgs and defs as the SDK's own params: what
// the request would be without the kept JSON (TestWireMatchesSDK).
func sdkParams(params sdk.MessageNewParams, msgs []model.Message, defs []model.ToolDef, markTools bool) (sdk.MessageNewParams, error) {
	var err error
	if params.Tools, err = tools(defs, markTools); err != nil {
		return params, err
	}
	params.Messages = make([]sdk.MessageParam, 0, len(msgs))
	for i, m := range msgs {
		p, err := message(i, m)
		if err != nil {
			return params, err
		}
		params.Messages = append(params.Messages, p)
	}
	markLast(params.Messages)
	return params, nil
}
