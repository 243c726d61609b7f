package openai

import (
	sdk "github.com/openai/openai-go/v3"

	"github.com/flower-run/flower/model"
)

// converted is what a conversation's model.Memo holds for this adapter:
// each message of the last request with the wire messages it became, and
// the tools, so the next request converts only what changed (issue 12). A
// message is known by its blocks' pointers: a view never writes a block
// after making it.
type converted struct {
	msgs []model.Message
	wire [][]sdk.ChatCompletionMessageParamUnion

	defs  []model.ToolDef
	tools []sdk.ChatCompletionToolUnionParam
}

// messages translates req's messages, reusing what c holds.
func (c *converted) messages(req *model.Request) []sdk.ChatCompletionMessageParamUnion {
	k := 0
	for k < len(c.msgs) && k < len(req.Messages) && sameMessage(c.msgs[k], req.Messages[k]) {
		k++
	}
	c.msgs, c.wire = c.msgs[:k], c.wire[:k]
	n := 0
	for _, w := range c.wire {
		n += len(w)
	}
	for _, m := range req.Messages[k:] {
		var w []sdk.ChatCompletionMessageParamUnion
		if m.Role == model.Assistant {
			w = appendAssistant(nil, m)
		} else {
			w = appendUser(nil, m)
		}
		c.msgs, c.wire = append(c.msgs, m), append(c.wire, w)
		n += len(w)
	}
	out := make([]sdk.ChatCompletionMessageParamUnion, 0, n+1)
	if req.System != "" {
		out = append(out, sdk.SystemMessage(req.System))
	}
	for _, w := range c.wire {
		out = append(out, w...)
	}
	return out
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

// toolParams parses the tool schemas once per conversation, not per call.
func (c *converted) toolParams(defs []model.ToolDef) ([]sdk.ChatCompletionToolUnionParam, error) {
	if c.tools != nil && model.SameTools(c.defs, defs) {
		return c.tools, nil
	}
	var out []sdk.ChatCompletionToolUnionParam
	for _, t := range defs {
		tool, err := functionTool(t)
		if err != nil {
			return nil, err
		}
		out = append(out, tool)
	}
	c.defs, c.tools = defs, out
	return out, nil
}
