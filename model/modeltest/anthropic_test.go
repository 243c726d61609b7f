package modeltest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/model"
)

func anthClient(srv *Server) *anthropic.Client {
	c := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	return &c
}

func anthParams(text string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model: "claude-sonnet-4-6", MaxTokens: 1024,
		System:   []anthropic.TextBlockParam{{Text: "You are terse.", CacheControl: anthropic.NewCacheControlEphemeralParam()}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name: "get_weather", InputSchema: anthropic.ToolInputSchemaParam{
				Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}},
	}
}

// anthStream runs a streaming call and returns the accumulated message, the
// events seen and the stream's error.
func anthStream(t *testing.T, c *anthropic.Client, ctx context.Context, p anthropic.MessageNewParams) (anthropic.Message, []anthropic.MessageStreamEventUnion, error) {
	t.Helper()
	stream := c.Messages.NewStreaming(ctx, p)
	defer stream.Close()
	var msg anthropic.Message
	var events []anthropic.MessageStreamEventUnion
	for stream.Next() {
		ev := stream.Current()
		events = append(events, ev)
		if err := msg.Accumulate(ev); err != nil {
			t.Fatalf("Accumulate: %v", err)
		}
	}
	return msg, events, stream.Err()
}

func TestAnthropicStream(t *testing.T) {
	usage := &model.Usage{Input: 25, Output: 42, CacheRead: 10, CacheCreation: 5}
	srv := NewAnthropic(Script(Turn{Thinking: "User wants weather.", Text: "Let me check the weather.",
		ToolCalls: []ToolCall{{Name: "get_weather", Input: `{"city": "Paris"}`}}, Usage: usage}))
	defer srv.Close()

	msg, events, err := anthStream(t, anthClient(srv), t.Context(), anthParams("Weather in Paris?"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(msg.Content), 3; got != want {
		t.Fatalf("%d blocks, want %d: %s", got, want, msg.RawJSON())
	}
	th, tx, tu := msg.Content[0].AsThinking(), msg.Content[1].AsText(), msg.Content[2].AsToolUse()
	if th.Thinking != "User wants weather." || !strings.HasPrefix(th.Signature, "sig-") {
		t.Errorf("thinking = %q sig %q", th.Thinking, th.Signature)
	}
	if tx.Text != "Let me check the weather." {
		t.Errorf("text = %q", tx.Text)
	}
	if !strings.HasPrefix(tu.ID, "toolu_") || tu.Name != "get_weather" {
		t.Errorf("tool_use id %q name %q", tu.ID, tu.Name)
	}
	var input map[string]string
	if err := json.Unmarshal(tu.Input, &input); err != nil || input["city"] != "Paris" {
		t.Errorf("tool input %s (%v)", tu.Input, err)
	}
	if msg.StopReason != anthropic.StopReasonToolUse {
		t.Errorf("stop reason %q", msg.StopReason)
	}
	got := model.Usage{Input: int(msg.Usage.InputTokens), Output: int(msg.Usage.OutputTokens),
		CacheRead: int(msg.Usage.CacheReadInputTokens), CacheCreation: int(msg.Usage.CacheCreationInputTokens)}
	if got != *usage {
		t.Errorf("usage %+v, want %+v", got, *usage)
	}
	if n := countDeltas(events, "text_delta"); n < 2 {
		t.Errorf("%d text deltas, want 2 or more", n)
	}
	if n := countDeltas(events, "input_json_delta"); n < 2 {
		t.Errorf("%d input_json deltas, want 2 or more", n)
	}
}

func countDeltas(events []anthropic.MessageStreamEventUnion, typ string) int {
	n := 0
	for _, ev := range events {
		if ev.Type == "content_block_delta" && ev.Delta.Type == typ {
			n++
		}
	}
	return n
}

func TestAnthropicStreamKeepsUTF8(t *testing.T) {
	text := "Ça coûte 5 € — 日本語のテキストです。"
	srv := NewAnthropic(Script(Turn{Text: text}))
	defer srv.Close()
	msg, _, err := anthStream(t, anthClient(srv), t.Context(), anthParams("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := msg.Content[0].AsText().Text; got != text {
		t.Fatalf("text = %q, want %q", got, text)
	}
}

func TestAnthropicNonStreaming(t *testing.T) {
	srv := NewAnthropic(Script(Turn{Text: "Hi there",
		ToolCalls: []ToolCall{{ID: "toolu_02", Name: "get_weather", Input: `{"city":"Oslo"}`}}}))
	defer srv.Close()

	msg, err := anthClient(srv).Messages.New(t.Context(), anthParams("Weather in Oslo?"))
	if err != nil {
		t.Fatal(err)
	}
	if got := msg.Content[0].AsText().Text; got != "Hi there" {
		t.Errorf("text = %q", got)
	}
	if tu := msg.Content[1].AsToolUse(); tu.ID != "toolu_02" || string(tu.Input) != `{"city":"Oslo"}` {
		t.Errorf("tool_use = %s %s", tu.ID, tu.Input)
	}
	if msg.StopReason != anthropic.StopReasonToolUse || !strings.HasPrefix(msg.ID, "msg_") {
		t.Errorf("stop %q id %q", msg.StopReason, msg.ID)
	}
	reqs := srv.Requests()
	if got, want := msg.Usage.InputTokens, int64(estimateTokens(reqs[0].Body)); got != want {
		t.Errorf("input tokens %d, want %d", got, want)
	}
	if msg.Usage.OutputTokens < 1 {
		t.Errorf("output tokens %d", msg.Usage.OutputTokens)
	}
	if reqs[0].Stream {
		t.Error("request recorded as streaming")
	}
}

func TestAnthropicFaults(t *testing.T) {
	tests := []struct {
		name       string
		fault      Fault
		stream     bool
		status     int
		typ        string
		msg        string
		retryAfter string
	}{
		{"rate limit", Fault{Status: 429, RetryAfter: "7"}, true, 429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", "7"},
		{"rate limit default retry-after", Fault{Status: 429}, false, 429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", "1"},
		{"bad request", Fault{Status: 400, Message: "prompt is too long"}, true, 400, "invalid_request_error", "prompt is too long", ""},
		{"auth", Fault{Status: 401}, true, 401, "authentication_error", "invalid x-api-key", ""},
		{"permission", Fault{Status: 403}, true, 403, "permission_error", "Your API key does not have permission to use the specified resource.", ""},
		{"not found", Fault{Status: 404, Message: "model: claude-x"}, true, 404, "not_found_error", "model: claude-x", ""},
		{"too large", Fault{Status: 413}, true, 413, "request_too_large", "Request exceeds the maximum allowed number of bytes.", ""},
		{"server", Fault{Status: 500}, true, 500, "api_error", "Internal server error", ""},
		{"timeout", Fault{Status: 504}, true, 504, "timeout_error", "Request timed out", ""},
		{"overloaded", Fault{Status: 529}, false, 529, "overloaded_error", "Overloaded", ""},
		{"custom type", Fault{Status: 400, Type: "billing_error", Message: "no credit"}, true, 400, "billing_error", "no credit", ""},
		{"stream error", Fault{StreamError: true}, true, 200, "overloaded_error", "Overloaded", ""},
		{"stream error without a stream", Fault{StreamError: true}, false, 529, "overloaded_error", "Overloaded", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewAnthropic(Script(Turn{Text: "Hello there", Fault: &tt.fault}))
			defer srv.Close()
			var err error
			if tt.stream {
				_, _, err = anthStream(t, anthClient(srv), t.Context(), anthParams("hi"))
			} else {
				_, err = anthClient(srv).Messages.New(t.Context(), anthParams("hi"))
			}
			var apiErr *anthropic.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v (%T), want *anthropic.Error", err, err)
			}
			if apiErr.StatusCode != tt.status || string(apiErr.Type()) != tt.typ || apiErr.Message != tt.msg {
				t.Errorf("got %d %q %q, want %d %q %q", apiErr.StatusCode, apiErr.Type(), apiErr.Message, tt.status, tt.typ, tt.msg)
			}
			if !strings.HasPrefix(apiErr.RequestID, "req_") {
				t.Errorf("request id %q", apiErr.RequestID)
			}
			if got := apiErr.Response.Header.Get("retry-after"); got != tt.retryAfter {
				t.Errorf("retry-after %q, want %q", got, tt.retryAfter)
			}
		})
	}
}

func TestAnthropicCut(t *testing.T) {
	for _, stream := range []bool{true, false} {
		srv := NewAnthropic(Script(Turn{Text: "Hello there", Fault: &Fault{CutAfterStart: true}}))
		var err error
		var events []anthropic.MessageStreamEventUnion
		if stream {
			_, events, err = anthStream(t, anthClient(srv), t.Context(), anthParams("hi"))
		} else {
			_, err = anthClient(srv).Messages.New(t.Context(), anthParams("hi"))
		}
		srv.Close()
		if err == nil {
			t.Errorf("stream=%v: no error after a cut (events %d)", stream, len(events))
		}
		var apiErr *anthropic.Error
		if errors.As(err, &apiErr) {
			t.Errorf("stream=%v: cut gave an API error: %v", stream, err)
		}
		if stream && (len(events) != 1 || events[0].Type != "message_start") {
			t.Errorf("events before the cut: %d", len(events))
		}
	}
}

func TestAnthropicDelay(t *testing.T) {
	srv := NewAnthropic(Script(Turn{Text: "late", Fault: &Fault{Delay: time.Millisecond}}))
	defer srv.Close()
	msg, _, err := anthStream(t, anthClient(srv), t.Context(), anthParams("hi"))
	if err != nil || msg.Content[0].AsText().Text != "late" {
		t.Fatalf("msg %s err %v", msg.RawJSON(), err)
	}
}

// A cancelled request must end a long delay: Close would otherwise wait
// for the handler.
func TestAnthropicDelayCancelled(t *testing.T) {
	srv := NewAnthropic(Script(Turn{Text: "never", Fault: &Fault{Delay: time.Hour}}))
	ctx, cancel := context.WithCancel(t.Context())
	srv.OnRequest(func(*Request) { cancel() })
	_, _, err := anthStream(t, anthClient(srv), ctx, anthParams("hi"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	srv.Close()
}

func TestAnthropicRecordsToolRoundTrip(t *testing.T) {
	srv := NewAnthropic(Script(
		Turn{Thinking: "Need weather.", Text: "Checking.", ToolCalls: []ToolCall{{ID: "toolu_01", Name: "get_weather", Input: `{"city":"Paris"}`}}},
		Turn{Text: "18C and sunny."},
	))
	defer srv.Close()
	c := anthClient(srv)
	p := anthParams("Weather in Paris?")
	first, _, err := anthStream(t, c, t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	p.Messages = append(p.Messages, first.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_01", "18C sunny", false)))
	if _, _, err := anthStream(t, c, t.Context(), p); err != nil {
		t.Fatal(err)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].N != 2 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	r := reqs[1]
	want := []model.Message{
		{Role: model.User, Content: []model.Block{&model.Text{Text: "Weather in Paris?"}}},
		{Role: model.Assistant, Content: []model.Block{
			&model.Thinking{Thinking: "Need weather.", Signature: anthSignature("Need weather.")},
			&model.Text{Text: "Checking."},
			&model.ToolUse{ID: "toolu_01", Name: "get_weather", Input: json.RawMessage(`{"city":"Paris"}`)},
		}},
		{Role: model.User, Content: []model.Block{&model.ToolResult{ToolUseID: "toolu_01", Content: "18C sunny"}}},
	}
	if diff := cmp.Diff(want, r.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if r.Model != "claude-sonnet-4-6" || r.System != "You are terse." || !r.Stream || r.Path != "/v1/messages" {
		t.Errorf("recorded %q %q stream=%v path %q", r.Model, r.System, r.Stream, r.Path)
	}
	if diff := cmp.Diff([]string{"get_weather"}, r.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer test-key" {
		t.Errorf("Authorization %q", got)
	}
}

// anthPost sends a raw request as curl would.
func anthPost(t *testing.T, url string, header map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("body %s: %v", data, err)
	}
	return resp.StatusCode, out
}

func TestAnthropicShortForms(t *testing.T) {
	srv := NewAnthropic(Script(Turn{Text: "ok"}))
	defer srv.Close()
	body := `{"model":"claude-haiku-4-5","max_tokens":64,"system":"Be brief.","messages":[
		{"role":"user","content":"hi"},
		{"role":"assistant","content":[{"type":"redacted_thinking","data":"xyz"},{"type":"tool_use","id":"t1","name":"ls","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a.go","is_error":true}]},
		{"role":"system","content":"Mind the tests."},
		{"role":"assistant","content":[]}]}`
	status, out := anthPost(t, srv.URL+"/v1/messages", map[string]string{"x-api-key": "k"}, body)
	if status != 200 || out["type"] != "message" {
		t.Fatalf("status %d body %v", status, out)
	}
	want := []model.Message{
		{Role: model.User, Content: []model.Block{&model.Text{Text: "hi"}}},
		{Role: model.Assistant, Content: []model.Block{&model.Thinking{Redacted: "xyz"},
			&model.ToolUse{ID: "t1", Name: "ls", Input: json.RawMessage(`{}`)}}},
		{Role: model.User, Content: []model.Block{&model.ToolResult{ToolUseID: "t1", Content: "a.go", IsError: true}}},
		{Role: "system", Content: []model.Block{&model.Text{Text: "Mind the tests."}}},
		{Role: model.Assistant},
	}
	r := srv.Requests()[0]
	if diff := cmp.Diff(want, r.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if r.System != "Be brief." {
		t.Errorf("system %q", r.System)
	}
}

func TestAnthropicRejects(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name, body, wantMsg string
	}{
		{"malformed", `{"model":`, "invalid JSON body"},
		{"temperature", `{"model":"m","max_tokens":5,"temperature":1,` + msgs + `}`, "temperature: Extra inputs are not permitted"},
		{"top_p", `{"model":"m","max_tokens":5,"top_p":0.9,` + msgs + `}`, "top_p:"},
		{"top_k", `{"model":"m","max_tokens":5,"top_k":5,` + msgs + `}`, "top_k:"},
		{"no model", `{"max_tokens":5,` + msgs + `}`, "model: Field required"},
		{"no max_tokens", `{"model":"m",` + msgs + `}`, "max_tokens: Field required"},
		{"no messages", `{"model":"m","max_tokens":5,"messages":[]}`, "messages:"},
		{"bad role", `{"model":"m","max_tokens":5,"messages":[{"role":"tool","content":"x"}]}`, "messages.0.role"},
		{"empty text", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, "messages.0.content.0.text: text content blocks must be non-empty"},
		{"empty content", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[]}]}`, "messages.0.content: all messages must have non-empty content"},
		{"tool_use in system message", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"system","content":[{"type":"tool_result","tool_use_id":"x"}]}]}`, "messages.1.content.0.type"},
		{"thinking from user", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"thinking","thinking":"x","signature":"s"}]}]}`, "messages.0.content.0.type"},
		{"unsigned thinking", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"thinking","thinking":"x"}]}]}`, "messages.1.content.0.signature"},
		{"orphan tool_result", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t9","content":"x"}]}]}`, "unexpected `tool_use_id`"},
		{"unanswered tool_use", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":{}}]},{"role":"user","content":"b"}]}`, "without `tool_result`"},
	}
	srv := NewAnthropic(Script())
	defer srv.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := anthPost(t, srv.URL+"/v1/messages", map[string]string{"Authorization": "Bearer k"}, tt.body)
			e, _ := out["error"].(map[string]any)
			if status != 400 || e["type"] != "invalid_request_error" {
				t.Fatalf("status %d body %v", status, out)
			}
			if msg, _ := e["message"].(string); !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("message %q, want it to contain %q", msg, tt.wantMsg)
			}
		})
	}
	if n := srv.Count(); n != 0 {
		t.Errorf("%d rejected requests recorded", n)
	}
}

func TestAnthropicAuth(t *testing.T) {
	const body = `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name   string
		header map[string]string
		status int
	}{
		{"x-api-key", map[string]string{"x-api-key": "k"}, 200},
		{"bearer", map[string]string{"Authorization": "Bearer k"}, 200},
		{"none", nil, 401},
		{"empty bearer", map[string]string{"Authorization": "Bearer "}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewAnthropic(Script(Turn{Text: "ok"}))
			defer srv.Close()
			status, out := anthPost(t, srv.URL+"/v1/messages", tt.header, body)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %v", status, tt.status, out)
			}
			if e, _ := out["error"].(map[string]any); status == 401 && e["type"] != "authentication_error" {
				t.Errorf("body %v", out)
			}
		})
	}
}

func TestAnthropicCountTokens(t *testing.T) {
	srv := NewAnthropic(Script())
	defer srv.Close()
	p := anthParams("How many tokens is this?")
	got, err := anthClient(srv).Messages.CountTokens(t.Context(), anthropic.MessageCountTokensParams{
		Model: p.Model, Messages: p.Messages,
		System: anthropic.MessageCountTokensParamsSystemUnion{OfTextBlockArray: p.System}})
	if err != nil {
		t.Fatal(err)
	}
	if got.InputTokens < 5 {
		t.Errorf("input tokens %d", got.InputTokens)
	}
	if n := srv.Count(); n != 0 {
		t.Errorf("count_tokens recorded %d requests", n)
	}
}

func TestAnthChunks(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", []string{""}},
		{"a", []string{"a"}},
		{"ab", []string{"a", "b"}},
		{"héllo", []string{"hél", "lo"}},
		{strings.Repeat("x", 40), []string{strings.Repeat("x", 16), strings.Repeat("x", 16), strings.Repeat("x", 8)}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, anthChunks(tt.in)); diff != "" {
			t.Errorf("anthChunks(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
