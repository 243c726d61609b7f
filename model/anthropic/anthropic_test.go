package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
)

const testModel = "claude-sonnet-4-6"

var weatherTool = model.ToolDef{Name: "get_weather", Description: "Get weather for a city",
	Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)}

func newProvider(srv *modeltest.Server) *Provider {
	return New(Config{APIKey: "test-key", BaseURL: srv.URL})
}

func userText(s string) model.Message {
	return model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: s}}}
}

// wireBody is the part of a recorded request body the tests inspect.
type wireBody struct {
	MaxTokens int              `json:"max_tokens"`
	System    []map[string]any `json:"system"`
	Messages  []struct {
		Role    string           `json:"role"`
		Content []map[string]any `json:"content"`
	} `json:"messages"`
	Tools    []map[string]any `json:"tools"`
	Thinking map[string]any   `json:"thinking"`
}

func decodeBody(t *testing.T, r *modeltest.Request) (wireBody, map[string]any) {
	t.Helper()
	var b wireBody
	var all map[string]any
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(r.Body, &all); err != nil {
		t.Fatal(err)
	}
	// The body goes as Provider wrote it: a stream asked for once, first.
	if !bytes.HasPrefix(r.Body, []byte(`{"stream":true,`)) || bytes.Count(r.Body, []byte(`"stream":`)) != 1 {
		t.Fatalf("the body does not ask for a stream once, first: %.200s", r.Body)
	}
	return b, all
}

func TestToolRoundTrip(t *testing.T) {
	srv := modeltest.NewAnthropic(modeltest.Script(
		modeltest.Turn{Thinking: "User wants weather.", Text: "Let me check.",
			ToolCalls: []modeltest.ToolCall{{Name: "get_weather", Input: `{"city": "Paris"}`}},
			Usage:     &model.Usage{Input: 25, Output: 42, CacheRead: 10, CacheCreation: 5}},
		modeltest.Turn{Text: "18C and sunny."},
	))
	defer srv.Close()
	p := newProvider(srv)

	req := &model.Request{Model: testModel, System: "You are terse.", Tools: []model.ToolDef{weatherTool},
		Messages: []model.Message{userText("Weather in Paris?")}}
	first, err := p.Stream(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFirst(t, first)

	use := first.Message.ToolUses()[0]
	req.Messages = append(req.Messages, first.Message, model.Message{Role: model.User,
		Content: []model.Block{&model.ToolResult{ToolUseID: use.ID, Content: "18C sunny"}}})
	second, err := p.Stream(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := second.Message.TextOf(); got != "18C and sunny." || second.StopReason != model.StopEnd {
		t.Errorf("second answer %q stop %q", got, second.StopReason)
	}
	// The fake parsed what we sent back: the whole history, thinking
	// signature included, must match what we hold. The SDK compacts tool
	// input, so it is compared as JSON.
	if diff := cmp.Diff(req.Messages, srv.Requests()[1].Messages, jsonEqual); diff != "" {
		t.Errorf("sent history (-want +got):\n%s", diff)
	}
}

var jsonEqual = cmp.Transformer("json", func(raw json.RawMessage) any {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	return v
})

func checkFirst(t *testing.T, r *model.Response) {
	t.Helper()
	c := r.Message.Content
	if len(c) != 3 {
		t.Fatalf("%d blocks, want 3", len(c))
	}
	th, _ := c[0].(*model.Thinking)
	if th == nil || th.Thinking != "User wants weather." || th.Signature == "" {
		t.Errorf("thinking block %#v", c[0])
	}
	if tx, _ := c[1].(*model.Text); tx == nil || tx.Text != "Let me check." {
		t.Errorf("text block %#v", c[1])
	}
	tu, _ := c[2].(*model.ToolUse)
	var in map[string]string
	if tu == nil || !strings.HasPrefix(tu.ID, "toolu_") || tu.Name != "get_weather" ||
		json.Unmarshal(tu.Input, &in) != nil || in["city"] != "Paris" {
		t.Errorf("tool_use block %#v", c[2])
	}
	want := model.Usage{Input: 25, Output: 42, CacheRead: 10, CacheCreation: 5}
	if r.Usage != want || r.StopReason != model.StopToolUse || r.Model != testModel ||
		!strings.HasPrefix(r.ID, "msg_") || r.Message.Role != model.Assistant {
		t.Errorf("response %+v", r)
	}
}

func TestThinkingSignatureSent(t *testing.T) {
	srv := modeltest.NewAnthropic(modeltest.Script(modeltest.Turn{Text: "ok"}))
	defer srv.Close()
	req := &model.Request{Model: testModel, Messages: []model.Message{
		userText("a"),
		{Role: model.Assistant, Content: []model.Block{
			&model.Thinking{Thinking: "hm", Signature: "EqQBCgIYAh"},
			&model.Thinking{Redacted: "opaque"},
			&model.Thinking{Thinking: "from another provider"}, // unsigned: dropped
			&model.Text{Text: ""},                              // empty: dropped
			&model.Text{Text: "b"}}},
		userText("c"),
	}}
	if _, err := newProvider(srv).Stream(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	body, _ := decodeBody(t, srv.Requests()[0])
	want := []map[string]any{
		{"type": "thinking", "thinking": "hm", "signature": "EqQBCgIYAh"},
		{"type": "redacted_thinking", "data": "opaque"},
		{"type": "text", "text": "b"},
	}
	if diff := cmp.Diff(want, body.Messages[1].Content); diff != "" {
		t.Errorf("assistant blocks sent (-want +got):\n%s", diff)
	}
}

var ephemeral = map[string]any{"type": "ephemeral"}

func TestCacheControl(t *testing.T) {
	toolTurn := []model.Message{userText("q"), {Role: model.Assistant, Content: []model.Block{
		&model.ToolUse{ID: "t1", Name: "get_weather", Input: json.RawMessage(`{"city":"Oslo"}`)}}},
		{Role: model.User, Content: []model.Block{&model.ToolResult{ToolUseID: "t1", Content: "x"}}}}
	tests := []struct {
		name       string
		system     string
		msgs       []model.Message
		wantSystem bool
		wantTool   bool
	}{
		{"system and text", "Be terse.", []model.Message{userText("hi")}, true, false},
		{"tool result last", "Be terse.", toolTurn, true, false},
		{"no system: last tool", "", []model.Message{userText("hi")}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewAnthropic(modeltest.Script(modeltest.Turn{Text: "ok"}))
			defer srv.Close()
			req := &model.Request{Model: testModel, System: tt.system, Tools: []model.ToolDef{weatherTool}, Messages: tt.msgs}
			if _, err := newProvider(srv).Stream(t.Context(), req, nil); err != nil {
				t.Fatal(err)
			}
			body, all := decodeBody(t, srv.Requests()[0])
			checkCacheMarks(t, body, tt.wantSystem, tt.wantTool)
			for _, k := range []string{"temperature", "top_p", "top_k"} {
				if _, ok := all[k]; ok {
					t.Errorf("request has %s", k)
				}
			}
		})
	}
}

// checkCacheMarks wants a breakpoint on the last block of the last message
// and nowhere else in the messages, and one on the system prompt or the
// last tool as asked.
func checkCacheMarks(t *testing.T, body wireBody, wantSystem, wantTool bool) {
	t.Helper()
	if got := len(body.System) > 0 && cmp.Equal(body.System[0]["cache_control"], ephemeral); got != wantSystem {
		t.Errorf("system cache_control = %v, want %v (%v)", got, wantSystem, body.System)
	}
	if got := cmp.Equal(body.Tools[len(body.Tools)-1]["cache_control"], ephemeral); got != wantTool {
		t.Errorf("tool cache_control = %v, want %v", got, wantTool)
	}
	for i, m := range body.Messages {
		for j, b := range m.Content {
			last := i == len(body.Messages)-1 && j == len(m.Content)-1
			if got := b["cache_control"] != nil; got != last {
				t.Errorf("messages.%d.content.%d cache_control %v, want %v", i, j, b["cache_control"], last)
			}
		}
	}
}

func TestRequestShape(t *testing.T) {
	tests := []struct {
		name         string
		cfg          Config
		reqMax       int
		wantMax      int
		wantThinking map[string]any
	}{
		{"defaults", Config{}, 0, DefaultMaxTokens, nil},
		{"config max", Config{MaxTokens: 4000}, 0, 4000, nil},
		{"request max wins", Config{MaxTokens: 4000}, 300, 300, nil},
		{"thinking", Config{ThinkingBudget: 2048}, 0, DefaultMaxTokens, map[string]any{"type": "enabled", "budget_tokens": 2048.0}},
		{"adaptive thinking", Config{ThinkingBudget: ThinkingAdaptive}, 0, DefaultMaxTokens, map[string]any{"type": "adaptive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewAnthropic(modeltest.Script(modeltest.Turn{Text: "ok"}))
			defer srv.Close()
			tt.cfg.APIKey, tt.cfg.BaseURL = "test-key", srv.URL
			req := &model.Request{Model: testModel, MaxTokens: tt.reqMax, Tools: []model.ToolDef{weatherTool},
				Messages: []model.Message{userText("hi")}}
			if _, err := New(tt.cfg).Stream(t.Context(), req, nil); err != nil {
				t.Fatal(err)
			}
			r := srv.Requests()[0]
			body, _ := decodeBody(t, r)
			if body.MaxTokens != tt.wantMax {
				t.Errorf("max_tokens %d, want %d", body.MaxTokens, tt.wantMax)
			}
			if diff := cmp.Diff(tt.wantThinking, body.Thinking); diff != "" {
				t.Errorf("thinking (-want +got):\n%s", diff)
			}
			wantSchema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
				"required": []any{"city"}, "additionalProperties": false}
			if diff := cmp.Diff(wantSchema, body.Tools[0]["input_schema"]); diff != "" {
				t.Errorf("input_schema (-want +got):\n%s", diff)
			}
			if got := r.Header.Get("Authorization"); got != "Bearer test-key" {
				t.Errorf("Authorization %q, want Bearer test-key", got)
			}
		})
	}
}

func TestDeltasInOrder(t *testing.T) {
	const thinking, text = "First I think about the question at some length.", "Then I answer it, also at some length."
	srv := modeltest.NewAnthropic(modeltest.Script(modeltest.Turn{Thinking: thinking, Text: text}))
	defer srv.Close()
	var deltas []model.Delta
	req := &model.Request{Model: testModel, Messages: []model.Message{userText("hi")}}
	resp, err := newProvider(srv).Stream(t.Context(), req, func(d model.Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	var gotThinking, gotText strings.Builder
	var nThinking, nText int
	for _, d := range deltas {
		if d.Thinking {
			if nText > 0 {
				t.Fatal("thinking delta after a text delta")
			}
			gotThinking.WriteString(d.Text)
			nThinking++
		} else {
			gotText.WriteString(d.Text)
			nText++
		}
	}
	if gotThinking.String() != thinking || gotText.String() != text || nThinking < 2 || nText < 2 {
		t.Errorf("deltas: %d thinking %q, %d text %q", nThinking, gotThinking.String(), nText, gotText.String())
	}
	if resp.Message.TextOf() != text {
		t.Errorf("response text %q", resp.Message.TextOf())
	}
}

func TestAPIErrors(t *testing.T) {
	tests := []struct {
		name       string
		fault      modeltest.Fault
		status     int
		typ        string
		message    string
		retryAfter time.Duration
	}{
		{"rate limit", modeltest.Fault{Status: 429, RetryAfter: "7"}, 429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", 7 * time.Second},
		{"rate limit default", modeltest.Fault{Status: 429}, 429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", time.Second},
		{"overloaded", modeltest.Fault{Status: 529, RetryAfter: "2.5"}, 529, "overloaded_error", "Overloaded", 2500 * time.Millisecond},
		{"server", modeltest.Fault{Status: 500}, 500, "api_error", "Internal server error", 0},
		{"timeout", modeltest.Fault{Status: 504}, 504, "timeout_error", "Request timed out", 0},
		{"bad request", modeltest.Fault{Status: 400, Message: "prompt is too long: 210000 tokens > 200000 maximum"}, 400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", 0},
		{"auth", modeltest.Fault{Status: 401}, 401, "authentication_error", "invalid x-api-key", 0},
		{"permission", modeltest.Fault{Status: 403}, 403, "permission_error", "Your API key does not have permission to use the specified resource.", 0},
		{"not found", modeltest.Fault{Status: 404, Message: "model: claude-x"}, 404, "not_found_error", "model: claude-x", 0},
		{"too large", modeltest.Fault{Status: 413}, 413, "request_too_large", "Request exceeds the maximum allowed number of bytes.", 0},
		{"error event in stream", modeltest.Fault{StreamError: true}, 200, "overloaded_error", "Overloaded", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewAnthropic(modeltest.Script(modeltest.Turn{Text: "Hello there", Fault: &tt.fault}))
			defer srv.Close()
			var deltas int
			req := &model.Request{Model: testModel, Messages: []model.Message{userText("hi")}}
			resp, err := newProvider(srv).Stream(t.Context(), req, func(model.Delta) { deltas++ })
			var apiErr *model.APIError
			if !errors.As(err, &apiErr) || resp != nil {
				t.Fatalf("err = %v (%T), resp %v; want *model.APIError", err, err, resp)
			}
			got := [...]any{apiErr.Provider, apiErr.Status, apiErr.Type, apiErr.Message, apiErr.RetryAfter}
			want := [...]any{"anthropic", tt.status, tt.typ, tt.message, tt.retryAfter}
			if got != want {
				t.Errorf("got %v, want %v", got, want)
			}
			var sdkErr *sdk.Error
			if !strings.HasPrefix(apiErr.RequestID, "req_") || !errors.As(err, &sdkErr) {
				t.Errorf("request id %q, unwraps to SDK error: %v", apiErr.RequestID, errors.As(err, &sdkErr))
			}
		})
	}
}

func TestBrokenStreams(t *testing.T) {
	tests := []struct {
		name    string
		srv     func() (url string, closeFn func())
		wantEnd bool // ErrStreamEnded expected
	}{
		{"cut after start", func() (string, func()) {
			s := modeltest.NewAnthropic(modeltest.Script(modeltest.Turn{Text: "Hello", Fault: &modeltest.Fault{CutAfterStart: true}}))
			return s.URL, s.Close
		}, false},
		{"clean end without message_stop", rawServer(func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: message_start\ndata: "+`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`+"\n\n")
			fmt.Fprint(w, "event: content_block_start\ndata: "+`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`+"\n\n")
		}), true},
		{"empty body", rawServer(func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
		}), true},
		{"data-only frames", rawServer(func(w http.ResponseWriter) {
			fmt.Fprint(w, `data: {"type":"message_stop"}`+"\n\n")
		}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, closeFn := tt.srv()
			defer closeFn()
			p := New(Config{APIKey: "test-key", BaseURL: url})
			resp, err := p.Stream(t.Context(), &model.Request{Model: testModel, Messages: []model.Message{userText("hi")}}, nil)
			var apiErr *model.APIError
			if err == nil || resp != nil || errors.As(err, &apiErr) {
				t.Fatalf("resp %v err %v; want a non-API error", resp, err)
			}
			t.Logf("err: %v", err)
			if got := errors.Is(err, ErrStreamEnded); got != tt.wantEnd {
				t.Errorf("errors.Is(%v, ErrStreamEnded) = %v, want %v", err, got, tt.wantEnd)
			}
			if !strings.HasPrefix(err.Error(), "anthropic stream: ") {
				t.Errorf("error %q not wrapped", err)
			}
		})
	}
}

// rawServer serves every request with write, for answers the fake cannot give.
func rawServer(write func(w http.ResponseWriter)) func() (string, func()) {
	return func() (string, func()) {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { write(w) }))
		return s.URL, s.Close
	}
}

func TestHTMLGatewayError(t *testing.T) {
	url, closeFn := rawServer(func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Retry-After-Ms", "250")
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html><body>"+strings.Repeat("bad gateway ", 100)+"</body></html>")
	})()
	defer closeFn()
	_, err := New(Config{APIKey: "k", BaseURL: url}).Stream(t.Context(),
		&model.Request{Model: testModel, Messages: []model.Message{userText("hi")}}, nil)
	var apiErr *model.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want *model.APIError", err)
	}
	if apiErr.Status != 502 || apiErr.Type != "" || !strings.HasPrefix(apiErr.Message, "<html>") ||
		len(apiErr.Message) > 300 || apiErr.RetryAfter != 250*time.Millisecond {
		t.Errorf("got %d %q %q %v", apiErr.Status, apiErr.Type, apiErr.Message, apiErr.RetryAfter)
	}
}

func TestConnectionRefused(t *testing.T) {
	s := httptest.NewServer(http.NotFoundHandler())
	url := s.URL
	s.Close()
	_, err := New(Config{APIKey: "k", BaseURL: url}).Stream(t.Context(),
		&model.Request{Model: testModel, Messages: []model.Message{userText("hi")}}, nil)
	var apiErr *model.APIError
	if err == nil || errors.As(err, &apiErr) || !strings.HasPrefix(err.Error(), "anthropic stream: ") {
		t.Fatalf("err = %v", err)
	}
}

func TestCancelDuringDelay(t *testing.T) {
	srv := modeltest.NewAnthropic(modeltest.Script(modeltest.Turn{Text: "never", Fault: &modeltest.Fault{Delay: time.Hour}}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	srv.OnRequest(func(*modeltest.Request) { cancel() })
	done := make(chan error, 1)
	go func() {
		_, err := newProvider(srv).Stream(ctx, &model.Request{Model: testModel, Messages: []model.Message{userText("hi")}}, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return after cancellation")
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		ms, s string
		want  time.Duration
	}{
		{"", "", 0},
		{"", "7", 7 * time.Second},
		{"", "0.5", 500 * time.Millisecond},
		{"1500", "7", 1500 * time.Millisecond},
		{"", now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second},
		{"", now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"", "soon", 0},
		{"-5", "-1", 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.ms != "" {
			h.Set("retry-after-ms", tt.ms)
		}
		if tt.s != "" {
			h.Set("retry-after", tt.s)
		}
		if got := retryAfter(h, now); got != tt.want {
			t.Errorf("retryAfter(ms=%q, s=%q) = %v, want %v", tt.ms, tt.s, got, tt.want)
		}
	}
}

func TestBadInputs(t *testing.T) {
	tests := []struct {
		name string
		req  model.Request
		want string
	}{
		{"bad schema", model.Request{Tools: []model.ToolDef{{Name: "x", Schema: json.RawMessage(`[`)}}}, "tool x"},
		{"bad tool input", model.Request{Messages: []model.Message{{Role: model.Assistant,
			Content: []model.Block{&model.ToolUse{ID: "t1", Name: "x", Input: json.RawMessage(`{"a":`)}}}}}, "tool_use t1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(Config{APIKey: "k", BaseURL: "http://127.0.0.1:1"}).Stream(t.Context(), &tt.req, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}
