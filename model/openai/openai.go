// Package openai adapts the official openai-go SDK's Chat Completions API to
// model.Provider. It serves OpenAI itself and the servers that speak the
// same dialect (ollama, vLLM, llama.cpp), so it leans only on what they
// share: string content, function tools and streamed deltas.
package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/flower-run/flower/model"
)

// Config sets up a Provider.
type Config struct {
	APIKey string
	// BaseURL is the API root including "/v1", as in OPENAI_BASE_URL
	// (e.g. http://localhost:11434/v1 for ollama); empty means OpenAI.
	BaseURL    string
	HTTPClient *http.Client // optional
	// MaxTokens caps the answer when the request sets no cap; 0 sends none,
	// leaving the server's default.
	MaxTokens int
}

// Provider calls a Chat Completions API.
type Provider struct {
	client    sdk.Client
	maxTokens int
}

var _ model.Provider = (*Provider)(nil)

// New makes a Provider. The SDK never retries: retrying is the runtime's job.
func New(cfg Config) *Provider {
	// The key is always passed, even empty, so an OPENAI_API_KEY in the
	// environment never leaks to a server the caller did not name.
	opts := []option.RequestOption{option.WithAPIKey(cfg.APIKey), option.WithMaxRetries(0)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &Provider{client: sdk.NewClient(opts...), maxTokens: cfg.MaxTokens}
}

// Stream sends req, passes text deltas to on and returns the whole answer.
func (p *Provider) Stream(ctx context.Context, req *model.Request, on func(model.Delta)) (*model.Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	stream := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	acc, usage, err := collect(stream, on)
	if err != nil {
		return nil, mapError(err)
	}
	return response(acc, usage)
}

// collect drains the stream into an accumulator. Usage is taken from the
// last chunk that carries it, not summed as the accumulator does, because
// some compatible servers repeat running totals on every chunk.
func collect(stream *ssestream.Stream[sdk.ChatCompletionChunk], on func(model.Delta)) (*sdk.ChatCompletionAccumulator, sdk.CompletionUsage, error) {
	acc := &sdk.ChatCompletionAccumulator{}
	var usage sdk.CompletionUsage
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			return nil, usage, errors.New("openai: stream chunk could not be accumulated")
		}
		if chunk.JSON.Usage.Valid() {
			usage = chunk.Usage
		}
		// The usage chunk has no choices; only the first choice is asked for.
		if on != nil && len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
			on(model.Delta{Text: chunk.Choices[0].Delta.Content})
		}
	}
	return acc, usage, stream.Err()
}

// response maps the accumulated completion to the neutral form.
func response(acc *sdk.ChatCompletionAccumulator, usage sdk.CompletionUsage) (*model.Response, error) {
	// Without a finish reason the answer is partial however cleanly the
	// connection ended; passing it on would look like a complete turn.
	if len(acc.Choices) == 0 || acc.Choices[0].FinishReason == "" {
		return nil, errors.New("openai: stream ended early")
	}
	choice := acc.Choices[0]
	msg := message(choice.Message)
	cached := int(usage.PromptTokensDetails.CachedTokens)
	return &model.Response{
		ID:         acc.ID,
		Model:      acc.Model,
		Message:    msg,
		StopReason: stopReason(choice.FinishReason, msg, choice.Message.Refusal),
		Usage: model.Usage{
			Input:     int(usage.PromptTokens) - cached,
			CacheRead: cached,
			Output:    int(usage.CompletionTokens),
		},
	}, nil
}

func message(m sdk.ChatCompletionMessage) model.Message {
	out := model.Message{Role: model.Assistant}
	text := m.Content
	if text == "" {
		text = m.Refusal // a refusal is the model's answer, worth showing
	}
	if text != "" {
		out.Content = append(out.Content, &model.Text{Text: text})
	}
	for i, tc := range m.ToolCalls {
		id := tc.ID
		if id == "" {
			// Some compatible servers omit ids; the tool results need one to
			// answer by.
			id = "call_" + strconv.Itoa(i)
		}
		out.Content = append(out.Content, &model.ToolUse{ID: id, Name: tc.Function.Name, Input: arguments(tc.Function.Arguments)})
	}
	return out
}

// arguments turns the wire's arguments string into raw JSON. Arguments that
// are not JSON are kept as a JSON string, so the tool can report the bad
// input to the model instead of the turn failing.
func arguments(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage(`{}`) // a call without arguments
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

func stopReason(finish string, msg model.Message, refusal string) string {
	switch {
	case finish == "tool_calls":
		return model.StopToolUse
	case finish == "stop" && len(msg.ToolUses()) > 0:
		// Some compatible servers say "stop" after tool calls; the calls
		// still need running.
		return model.StopToolUse
	case finish == "stop" && refusal != "":
		return model.StopRefusal
	case finish == "stop":
		return model.StopEnd
	case finish == "length":
		return model.StopMaxTokens
	}
	return finish
}

// mapError turns SDK errors into *model.APIError so the runtime can
// classify them; anything else (transport, cancellation) is wrapped.
func mapError(err error) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return fromAPIError(apiErr)
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		return fromStreamError(streamErr)
	}
	return fmt.Errorf("openai stream: %w", err)
}

func fromAPIError(e *sdk.Error) *model.APIError {
	out := &model.APIError{Provider: "openai", Status: e.StatusCode, Type: e.Code, Message: e.Message, Err: e}
	if out.Type == "" {
		out.Type = e.Type
	}
	if e.Response != nil {
		out.RequestID = e.Response.Header.Get("x-request-id")
		out.RetryAfter = retryAfter(e.Response.Header, time.Now())
	}
	return out
}

// fromStreamError reads the error frame that arrived after the 200.
func fromStreamError(e *ssestream.StreamError) *model.APIError {
	out := &model.APIError{Provider: "openai", Status: http.StatusOK, Type: "server_error", Message: e.Message, Err: e}
	var frame struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(e.Event.Data, &frame) != nil {
		return out
	}
	switch {
	case frame.Error.Code != nil && *frame.Error.Code != "":
		out.Type = *frame.Error.Code
	case frame.Error.Type != "":
		out.Type = frame.Error.Type
	}
	if frame.Error.Message != "" {
		out.Message = frame.Error.Message
	}
	return out
}

// retryAfter reads retry-after-ms, then retry-after (seconds or an HTTP
// date), the order the SDK itself prefers; 0 when absent or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration { return model.RetryAfter(h, now) }

// params translates the neutral request into the SDK's.
func (p *Provider) params(req *model.Request) (sdk.ChatCompletionNewParams, error) {
	params := sdk.ChatCompletionNewParams{
		Model:         req.Model,
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	if n := cmp.Or(req.MaxTokens, p.maxTokens); n > 0 {
		params.MaxCompletionTokens = sdk.Int(int64(n))
	}
	var err error
	convert := func(c *converted) {
		params.Messages = c.messages(req)
		params.Tools, err = c.toolParams(req.Tools)
	}
	if req.Memo == nil {
		convert(&converted{})
		return params, err
	}
	req.Memo.Do(func(v *any) {
		c, ok := (*v).(*converted)
		if !ok {
			c = &converted{}
			*v = c
		}
		convert(c)
	})
	return params, err
}

func functionTool(t model.ToolDef) (sdk.ChatCompletionToolUnionParam, error) {
	schema := sdk.FunctionParameters{"type": "object", "properties": map[string]any{}}
	if len(t.Schema) > 0 {
		schema = sdk.FunctionParameters{}
		if err := json.Unmarshal(t.Schema, &schema); err != nil {
			return sdk.ChatCompletionToolUnionParam{}, fmt.Errorf("openai: schema of tool %s: %w", t.Name, err)
		}
	}
	def := sdk.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
	if t.Description != "" {
		def.Description = sdk.String(t.Description)
	}
	return sdk.ChatCompletionFunctionTool(def), nil
}

// appendUser splits a user message: each tool result becomes a tool
// message, put first because the API wants them right after the assistant
// message that called; the text follows as a user message.
func appendUser(out []sdk.ChatCompletionMessageParamUnion, m model.Message) []sdk.ChatCompletionMessageParamUnion {
	var texts []string
	for _, b := range m.Content {
		switch v := b.(type) {
		case *model.ToolResult:
			out = append(out, sdk.ToolMessage(toolContent(v), v.ToolUseID))
		case *model.Text:
			texts = append(texts, v.Text)
		}
	}
	if len(texts) > 0 {
		// One string, not content parts: every compatible server takes it.
		out = append(out, sdk.UserMessage(strings.Join(texts, "\n\n")))
	}
	return out
}

// toolContent flags errors in the text: the wire has no is_error.
func toolContent(r *model.ToolResult) string {
	if r.IsError {
		return "Error: " + r.Content
	}
	return r.Content
}

// appendAssistant sends text and tool calls; thinking has no place on this
// wire and is dropped. A message left empty is skipped, since the API
// rejects an assistant message with neither content nor tool calls.
func appendAssistant(out []sdk.ChatCompletionMessageParamUnion, m model.Message) []sdk.ChatCompletionMessageParamUnion {
	var msg sdk.ChatCompletionAssistantMessageParam
	if text := m.TextOf(); text != "" {
		msg.Content.OfString = sdk.String(text)
	}
	for _, u := range m.ToolUses() {
		msg.ToolCalls = append(msg.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID:       u.ID,
				Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: u.Name, Arguments: argumentsString(u.Input)},
			},
		})
	}
	if msg.Content.OfString.Valid() || len(msg.ToolCalls) > 0 {
		out = append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: &msg})
	}
	return out
}

// argumentsString is the inverse of arguments: input kept as a JSON string
// because it was not JSON goes back as the model wrote it.
func argumentsString(in json.RawMessage) string {
	if len(in) == 0 {
		return "{}"
	}
	var s string
	if in[0] == '"' && json.Unmarshal(in, &s) == nil {
		return s
	}
	return string(in)
}
