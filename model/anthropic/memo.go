package anthropic

import (
	"bytes"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/flower-run/flower/model"
)

// converted is what a conversation's model.Memo holds for this adapter:
// the messages and tools of the last request with their SDK params, so the
// next request converts only what changed (issue 12). A message is known by
// its blocks' pointers: a view never writes a block after making it.
type converted struct {
	msgs   []model.Message    // the messages converted before the last one
	params []sdk.MessageParam // their params, without a cache breakpoint

	defs      []model.ToolDef
	markTools bool
	tools     []sdk.ToolUnionParam
}

// convert translates msgs and defs, reusing c. The last message is always
// converted anew and carries the cache breakpoint (markLast); the params
// before it are c's, so a breakpoint never stays on an older message.
func (c *converted) convert(msgs []model.Message, defs []model.ToolDef, markTools bool) ([]sdk.MessageParam, []sdk.ToolUnionParam, error) {
	tools, err := c.convertTools(defs, markTools)
	if err != nil {
		return nil, nil, err
	}
	if len(msgs) == 0 {
		return []sdk.MessageParam{}, tools, nil
	}
	k := 0
	for k < len(c.msgs) && k < len(msgs)-1 && sameMessage(c.msgs[k], msgs[k]) {
		k++
	}
	c.msgs, c.params = c.msgs[:k], c.params[:k]
	for i := k; i < len(msgs); i++ {
		p, err := message(i, msgs[i])
		if err != nil {
			return nil, nil, err
		}
		c.params = append(c.params, p)
		if i < len(msgs)-1 {
			c.msgs = append(c.msgs, msgs[i])
		}
	}
	out := c.params
	c.params = c.params[:len(c.msgs)] // the last one is the request's alone
	markLast(out)
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

// convertTools parses the tool schemas once per conversation, not per call.
func (c *converted) convertTools(defs []model.ToolDef, markLast bool) ([]sdk.ToolUnionParam, error) {
	if c.tools != nil && markLast == c.markTools && sameDefs(c.defs, defs) {
		return c.tools, nil
	}
	out, err := tools(defs, markLast)
	if err != nil {
		return nil, err
	}
	c.defs, c.markTools, c.tools = defs, markLast, out
	return out, nil
}

func sameDefs(a, b []model.ToolDef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].Schema, b[i].Schema) {
			return false
		}
	}
	return true
}
