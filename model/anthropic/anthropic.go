// Package anthropic is the model.Provider for the Anthropic Messages API,
// over the official SDK. It streams every call, caches the prompt prefix,
// and never retries: the runtime does, using the *model.APIError it returns.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/flower-run/flower/model"
)

// Config configures a Provider.
type Config struct {
	APIKey string
	// BaseURL overrides the API's address; empty leaves it to the SDK, which
	// reads ANTHROPIC_BASE_URL.
	BaseURL    string
	HTTPClient *http.Client // optional
	// MaxTokens caps each answer when the request sets no MaxTokens; 0 means 8192.
	MaxTokens int
	// ThinkingBudget, when positive, turns on extended thinking with this many
	// tokens; it must be at least 1024 and below the max tokens.
	// ThinkingAdaptive lets the model decide instead; 0 leaves thinking off.
	ThinkingBudget int
}

// ThinkingAdaptive as Config.ThinkingBudget asks for adaptive thinking,
// which newer models prefer: the SDK prints a deprecation warning to
// stderr on every call that sets a budget for them.
const ThinkingAdaptive = -1

// DefaultMaxTokens is the answer cap when neither Config nor Request sets one.
const DefaultMaxTokens = 8192

// ErrStreamEnded reports a stream that stopped before its message_stop
// event: the answer is incomplete and must not be used.
var ErrStreamEnded = errors.New("stream ended early")

// Provider calls the Anthropic Messages API.
type Provider struct {
	client sdk.Client
	cfg    Config
}

var _ model.Provider = (*Provider)(nil)

// New returns a Provider. The API key is always passed explicitly, so the
// SDK never falls back to its credential chain (environment, profile files).
func New(cfg Config) *Provider {
	opts := []option.RequestOption{option.WithAPIKey(cfg.APIKey), option.WithMaxRetries(0)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = sharedClient() // connections kept across Providers (client.go)
	}
	opts = append(opts, option.WithHTTPClient(hc))
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	return &Provider{client: sdk.NewClient(opts...), cfg: cfg}
}

// Stream sends req, passes text and thinking deltas to on as they arrive,
// and returns the complete answer. API errors come back as *model.APIError.
func (p *Provider) Stream(ctx context.Context, req *model.Request, on func(model.Delta)) (*model.Response, error) {
	params, raw, err := p.params(req)
	if err != nil {
		return nil, err
	}
	stream := p.client.Messages.NewStreaming(ctx, params, option.WithMiddleware(sendBody(raw)))
	defer stream.Close()
	msg, err := accumulate(stream, on)
	if err != nil {
		return nil, convertError(err)
	}
	return response(msg)
}

// sendBody sends raw as the request's body. The SDK encodes params, which
// hold all but the messages and tools, then sets "stream" in its encoding
// (sjson, a copy); given the whole body, as raw JSON on the params or as
// the request body, it would compact it again and copy it again: two
// passes over a request of megabytes on every call of a long session
// (issue 12). Its small body is dropped here, as the request goes out.
func sendBody(raw []byte) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		req.ContentLength = int64(len(raw))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
		req.Body, _ = req.GetBody()
		return next(req)
	}
}

// accumulate reads the stream to its end. A stream that ends without
// message_stop is an error even when the SDK saw none: a connection closed
// between events looks like a clean end of the body.
func accumulate(stream *ssestream.Stream[sdk.MessageStreamEventUnion], on func(model.Delta)) (*sdk.Message, error) {
	var msg sdk.Message
	stopped := false
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, fmt.Errorf("accumulate %s: %w", ev.Type, err)
		}
		emit(ev, on)
		stopped = stopped || ev.Type == "message_stop"
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	if !stopped {
		return nil, ErrStreamEnded
	}
	return &msg, nil
}

// emit passes a text or thinking delta to on.
func emit(ev sdk.MessageStreamEventUnion, on func(model.Delta)) {
	if on == nil || ev.Type != "content_block_delta" {
		return
	}
	switch ev.Delta.Type {
	case "text_delta":
		on(model.Delta{Text: ev.Delta.Text})
	case "thinking_delta":
		on(model.Delta{Thinking: true, Text: ev.Delta.Thinking})
	}
}

// response maps the accumulated message to the neutral form.
func response(msg *sdk.Message) (*model.Response, error) {
	out := &model.Response{ID: msg.ID, Model: string(msg.Model), StopReason: string(msg.StopReason),
		Message: model.Message{Role: model.Assistant},
		Usage: model.Usage{Input: int(msg.Usage.InputTokens), Output: int(msg.Usage.OutputTokens),
			CacheRead: int(msg.Usage.CacheReadInputTokens), CacheCreation: int(msg.Usage.CacheCreationInputTokens)}}
	for i, b := range msg.Content {
		blk, err := block(b)
		if err != nil {
			return nil, fmt.Errorf("anthropic: content block %d: %w", i, err)
		}
		out.Message.Content = append(out.Message.Content, blk)
	}
	return out, nil
}

// block maps one answer block. The union's fields are read directly: they
// hold the accumulated deltas whatever state the block's raw JSON is in.
func block(b sdk.ContentBlockUnion) (model.Block, error) {
	switch b.Type {
	case "text":
		return &model.Text{Text: b.Text}, nil
	case "thinking":
		return &model.Thinking{Thinking: b.Thinking, Signature: b.Signature}, nil
	case "redacted_thinking":
		return &model.Thinking{Redacted: b.Data}, nil
	case "tool_use":
		if !json.Valid(b.Input) {
			return nil, fmt.Errorf("tool_use %s: input is not JSON", b.ID)
		}
		return &model.ToolUse{ID: b.ID, Name: b.Name, Input: append(json.RawMessage(nil), b.Input...)}, nil
	}
	return nil, fmt.Errorf("unsupported block type %q", b.Type)
}

// convertError turns an SDK error into a *model.APIError, and wraps any
// other failure (connection, cut stream, cancellation).
func convertError(err error) error {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		return fmt.Errorf("anthropic stream: %w", err)
	}
	out := &model.APIError{Provider: "anthropic", Status: apiErr.StatusCode, Type: string(apiErr.Type()),
		Message: apiErr.Message, RequestID: apiErr.RequestID, Err: err}
	if out.Message == "" {
		out.Message = snippet(apiErr.RawJSON())
	}
	if apiErr.Response != nil { // an error event inside a stream may come without one
		out.RetryAfter = retryAfter(apiErr.Response.Header, time.Now())
	}
	return out
}

// snippet is the start of a raw error body (an HTML gateway page, say),
// enough to recognise it without flooding a log line.
func snippet(body string) string {
	const max = 200
	if r := []rune(body); len(r) > max {
		return string(r[:max]) + "…"
	}
	return body
}

// retryAfter reads the server's wait: retry-after-ms first, then
// retry-after in seconds or as an HTTP date; 0 when absent or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration { return model.RetryAfter(h, now) }

// params translates a request. Two cache breakpoints mark the prompt
// prefix: the system prompt (with the tools before it) is shared by every
// call of a session, and the last message block makes the next call read
// the whole conversation so far from the cache. The body, raw, is the kept
// JSON of the messages (wire.go) spliced into the JSON of params, which
// hold the rest; it asks for a stream.
func (p *Provider) params(req *model.Request) (params sdk.MessageNewParams, raw []byte, err error) {
	params = p.head(req)
	msgs, tools, err := p.encode(req)
	if err == nil {
		raw, err = body(params, msgs, tools)
	}
	return params, raw, err
}

// encode is the JSON of req's messages and tools, kept in req.Memo.
func (p *Provider) encode(req *model.Request) (msgs [][]byte, tools []byte, err error) {
	if req.Memo == nil {
		return (&converted{}).encode(req.Messages, req.Tools, req.System == "")
	}
	req.Memo.Do(func(v *any) {
		c, ok := (*v).(*converted)
		if !ok {
			c = &converted{}
			*v = c
		}
		msgs, tools, err = c.encode(req.Messages, req.Tools, req.System == "")
	})
	return msgs, tools, err
}

// head is the request's params but its messages and tools.
func (p *Provider) head(req *model.Request) sdk.MessageNewParams {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.cfg.MaxTokens
	}
	params := sdk.MessageNewParams{Model: sdk.Model(req.Model), MaxTokens: int64(maxTokens)}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}
	switch {
	case p.cfg.ThinkingBudget > 0:
		params.Thinking = sdk.ThinkingConfigParamOfEnabled(int64(p.cfg.ThinkingBudget))
	case p.cfg.ThinkingBudget == ThinkingAdaptive:
		params.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{}}
	}
	return params
}

// tools translates tool definitions; markLast puts the prefix breakpoint
// on the last tool when there is no system prompt to carry it.
func tools(defs []model.ToolDef, markLast bool) ([]sdk.ToolUnionParam, error) {
	var out []sdk.ToolUnionParam
	for _, d := range defs {
		schema, err := inputSchema(d.Schema)
		if err != nil {
			return nil, fmt.Errorf("anthropic: tool %s: %w", d.Name, err)
		}
		t := &sdk.ToolParam{Name: d.Name, InputSchema: schema}
		if d.Description != "" {
			t.Description = sdk.String(d.Description)
		}
		out = append(out, sdk.ToolUnionParam{OfTool: t})
	}
	if markLast && len(out) > 0 {
		out[len(out)-1].OfTool.CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	return out, nil
}

// inputSchema splits a JSON Schema object into the SDK's fields; keywords
// other than properties and required travel as extra fields.
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var s sdk.ToolInputSchemaParam
	if len(raw) == 0 {
		return s, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return s, fmt.Errorf("input schema: %w", err)
	}
	s.Properties = m["properties"]
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	delete(m, "type")
	delete(m, "properties")
	delete(m, "required")
	if len(m) > 0 {
		s.ExtraFields = m
	}
	return s, nil
}

// message translates the i-th message of a request.
func message(i int, m model.Message) (sdk.MessageParam, error) {
	var blocks []sdk.ContentBlockParamUnion
	for _, b := range m.Content {
		c, ok, err := contentBlock(b)
		if err != nil {
			return sdk.MessageParam{}, fmt.Errorf("anthropic: message %d: %w", i, err)
		}
		if ok {
			blocks = append(blocks, c)
		}
	}
	if m.Role == model.Assistant {
		return sdk.NewAssistantMessage(blocks...), nil
	}
	return sdk.NewUserMessage(blocks...), nil
}

// contentBlock translates one block; ok is false for a block the API
// would reject and that carries nothing for the model: empty text, or
// thinking without a signature (from another provider).
func contentBlock(b model.Block) (c sdk.ContentBlockParamUnion, ok bool, err error) {
	switch v := b.(type) {
	case *model.Text:
		return sdk.NewTextBlock(v.Text), v.Text != "", nil
	case *model.Thinking:
		if v.Redacted != "" {
			return sdk.NewRedactedThinkingBlock(v.Redacted), true, nil
		}
		return sdk.NewThinkingBlock(v.Signature, v.Thinking), v.Signature != "", nil
	case *model.ToolUse:
		input := v.Input
		if len(input) == 0 {
			input = json.RawMessage(`{}`)
		}
		if !json.Valid(input) {
			return c, false, fmt.Errorf("tool_use %s: input is not JSON", v.ID)
		}
		return sdk.NewToolUseBlock(v.ID, input, v.Name), true, nil
	case *model.ToolResult:
		return toolResult(v), true, nil
	}
	return c, false, fmt.Errorf("unknown block %T", b)
}

// toolResult sends the content as one text block, or none when empty: the
// API rejects empty text blocks.
func toolResult(r *model.ToolResult) sdk.ContentBlockParamUnion {
	p := &sdk.ToolResultBlockParam{ToolUseID: r.ToolUseID}
	if r.IsError {
		p.IsError = sdk.Bool(true)
	}
	if r.Content != "" {
		p.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: r.Content}}}
	}
	return sdk.ContentBlockParamUnion{OfToolResult: p}
}

// markLast puts a cache breakpoint on the last block of the last message
// that can carry one (thinking blocks cannot).
func markLast(msgs []sdk.MessageParam) {
	if len(msgs) == 0 {
		return
	}
	content, _ := msgs[len(msgs)-1].GetContent().AsAny().(*[]sdk.ContentBlockParamUnion)
	if content == nil {
		return
	}
	for i := len(*content) - 1; i >= 0; i-- {
		if cc := (*content)[i].GetCacheControl(); cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
			return
		}
	}
}
