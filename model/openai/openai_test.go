package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
)

func newTestProvider(t *testing.T, turns ...modeltest.Turn) (*Provider, *modeltest.Server) {
	t.Helper()
	srv := modeltest.NewOpenAI(modeltest.Script(turns...))
	t.Cleanup(srv.Close)
	return New(Config{APIKey: "sk-test", BaseURL: srv.OpenAIBaseURL()}), srv
}

func userText(s string) model.Message {
	return model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: s}}}
}

func weatherRequest() *model.Request {
	return &model.Request{
		Model:    "gpt-4o-mini",
		System:   "You are terse.",
		Messages: []model.Message{userText("Weather and time in Paris?")},
		Tools: []model.ToolDef{
			{Name: "get_weather", Description: "Get weather", Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "get_time"},
		},
	}
}

// wireRequest is the part of a recorded request body the tests look at.
type wireRequest struct {
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct{ Name, Arguments string }
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
}

func recorded(t *testing.T, srv *modeltest.Server, n int) wireRequest {
	t.Helper()
	var w wireRequest
	if err := json.Unmarshal(srv.Requests()[n].Body, &w); err != nil {
		t.Fatalf("request %d body: %v", n, err)
	}
	return w
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParallelToolCallsRoundTrip(t *testing.T) {
	p, srv := newTestProvider(t,
		modeltest.Turn{Text: "Checking both.", ToolCalls: []modeltest.ToolCall{
			{ID: "call_abc", Name: "get_weather", Input: `{"city":"Paris"}`},
			{ID: "call_def", Name: "get_time", Input: `{"tz":"CET"}`}}},
		modeltest.Turn{Text: "18C and noon."},
	)
	req := weatherRequest()
	var streamed strings.Builder
	res, err := p.Stream(context.Background(), req, func(d model.Delta) { streamed.WriteString(d.Text) })
	if err != nil {
		t.Fatalf("first turn: %v", err)
	}
	want := model.Message{Role: model.Assistant, Content: []model.Block{&model.Text{Text: "Checking both."},
		&model.ToolUse{ID: "call_abc", Name: "get_weather", Input: json.RawMessage(`{"city":"Paris"}`)},
		&model.ToolUse{ID: "call_def", Name: "get_time", Input: json.RawMessage(`{"tz":"CET"}`)}}}
	if got, want := mustJSON(t, res.Message), mustJSON(t, want); got != want {
		t.Errorf("message:\n got %s\nwant %s", got, want)
	}
	if res.StopReason != model.StopToolUse || streamed.String() != "Checking both." {
		t.Errorf("stop %q, streamed %q; want tool_use and the text", res.StopReason, streamed.String())
	}

	// Thinking from another provider's turn must not reach this wire.
	res.Message.Content = append([]model.Block{&model.Thinking{Thinking: "hmm", Signature: "sig"}}, res.Message.Content...)
	req.Messages = append(req.Messages, res.Message, model.Message{Role: model.User, Content: []model.Block{
		&model.ToolResult{ToolUseID: "call_abc", Content: "18C sunny"},
		&model.ToolResult{ToolUseID: "call_def", Content: "no clock", IsError: true},
		&model.Text{Text: "Be brief."}}})
	res, err = p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatalf("second turn: %v", err)
	}
	if got := res.Message.TextOf(); got != "18C and noon." || res.StopReason != model.StopEnd {
		t.Errorf("got %q %q, want the final answer", got, res.StopReason)
	}
	checkFollowUpWire(t, recorded(t, srv, 1))
}

// checkFollowUpWire checks the second request as OpenAI sees it.
func checkFollowUpWire(t *testing.T, w wireRequest) {
	t.Helper()
	var got []string
	for _, m := range w.Messages {
		s := m.Role + " " + string(m.Content)
		for _, tc := range m.ToolCalls {
			s += fmt.Sprintf(" [%s %s %s]", tc.ID, tc.Function.Name, tc.Function.Arguments)
		}
		if m.ToolCallID != "" {
			s += " for " + m.ToolCallID
		}
		got = append(got, s)
	}
	want := []string{
		`system "You are terse."`,
		`user "Weather and time in Paris?"`,
		`assistant "Checking both." [call_abc get_weather {"city":"Paris"}] [call_def get_time {"tz":"CET"}]`,
		`tool "18C sunny" for call_abc`,
		`tool "Error: no clock" for call_def`,
		`user "Be brief."`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("wire messages:\n got %s\nwant %s", strings.Join(got, "\n    "), strings.Join(want, "\n     "))
	}
	if !w.StreamOptions.IncludeUsage || w.MaxCompletionTokens != nil {
		t.Errorf("include_usage %v, max_completion_tokens %v; want true and absent", w.StreamOptions.IncludeUsage, w.MaxCompletionTokens)
	}
	if len(w.Tools) != 2 || w.Tools[0].Function.Description != "Get weather" || !strings.Contains(string(w.Tools[0].Function.Parameters), `"required":["city"]`) {
		t.Errorf("tools = %+v", w.Tools)
	}
	if got := string(w.Tools[1].Function.Parameters); got != `{"properties":{},"type":"object"}` {
		t.Errorf("schema-less tool parameters = %s", got)
	}
}

func TestRecordedFollowUpParses(t *testing.T) {
	p, srv := newTestProvider(t, modeltest.Turn{Text: "ok"})
	req := weatherRequest()
	req.Messages = append(req.Messages,
		model.Message{Role: model.Assistant, Content: []model.Block{&model.ToolUse{ID: "c1", Name: "get_time", Input: json.RawMessage(`{}`)}}},
		model.Message{Role: model.User, Content: []model.Block{&model.ToolResult{ToolUseID: "c1", Content: "noon"}}})
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	got := mustJSON(t, srv.Requests()[0].Messages)
	want := mustJSON(t, req.Messages)
	if got != want {
		t.Errorf("fake parsed:\n got %s\nwant %s", got, want)
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name string
		in   model.Usage
		want model.Usage
	}{
		{"cached", model.Usage{Input: 18, CacheRead: 32, Output: 20}, model.Usage{Input: 18, CacheRead: 32, Output: 20}},
		{"no cache", model.Usage{Input: 7, Output: 3}, model.Usage{Input: 7, Output: 3}},
		// OpenAI reports no cache writes: they are plain input on this wire.
		{"creation", model.Usage{Input: 10, CacheCreation: 5, CacheRead: 3, Output: 1}, model.Usage{Input: 15, CacheRead: 3, Output: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newTestProvider(t, modeltest.Turn{Text: "hi", Usage: &tt.in})
			res, err := p.Stream(context.Background(), weatherRequest(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Usage != tt.want {
				t.Errorf("usage = %+v, want %+v", res.Usage, tt.want)
			}
			if res.ID == "" || res.Model != "gpt-4o-mini" {
				t.Errorf("id %q model %q", res.ID, res.Model)
			}
		})
	}
}

func TestStopReasons(t *testing.T) {
	call := []modeltest.ToolCall{{Name: "get_time"}}
	tests := []struct {
		name string
		turn modeltest.Turn
		want string
	}{
		{"end", modeltest.Turn{Text: "done"}, model.StopEnd},
		{"tools", modeltest.Turn{ToolCalls: call}, model.StopToolUse},
		{"tools said stop", modeltest.Turn{ToolCalls: call, Stop: model.StopEnd}, model.StopToolUse},
		{"length", modeltest.Turn{Text: "cut sh", Stop: model.StopMaxTokens}, model.StopMaxTokens},
		{"other", modeltest.Turn{Text: "x", Stop: "content_filter"}, "content_filter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newTestProvider(t, tt.turn)
			res, err := p.Stream(context.Background(), weatherRequest(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != tt.want {
				t.Errorf("stop = %q, want %q", res.StopReason, tt.want)
			}
		})
	}
}

func TestBadArgumentsStayStrings(t *testing.T) {
	p, srv := newTestProvider(t,
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{{ID: "c1", Name: "get_weather", Input: `{"city":`}}},
		modeltest.Turn{Text: "sorry"})
	req := weatherRequest()
	res, err := p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Message.ToolUses()[0].Input), `"{\"city\":"`; got != want {
		t.Errorf("input = %s, want %s", got, want)
	}
	req.Messages = append(req.Messages, res.Message, model.Message{Role: model.User, Content: []model.Block{
		&model.ToolResult{ToolUseID: "c1", Content: "bad input", IsError: true}}})
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	// The model sees its own arguments back, not a quoted version of them.
	if got := recorded(t, srv, 1).Messages[2].ToolCalls[0].Function.Arguments; got != `{"city":` {
		t.Errorf("arguments sent back = %q", got)
	}
}

func TestMaxTokens(t *testing.T) {
	tests := []struct {
		name        string
		cfg, reqMax int
		want        int // 0: absent
	}{
		{"none", 0, 0, 0},
		{"config", 100, 0, 100},
		{"request wins", 100, 50, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewOpenAI(modeltest.Script(modeltest.Turn{Text: "ok"}))
			defer srv.Close()
			p := New(Config{APIKey: "sk-test", BaseURL: srv.OpenAIBaseURL(), MaxTokens: tt.cfg})
			req := weatherRequest()
			req.MaxTokens = tt.reqMax
			if _, err := p.Stream(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			got := 0
			if m := recorded(t, srv, 0).MaxCompletionTokens; m != nil {
				got = *m
			}
			if got != tt.want {
				t.Errorf("max_completion_tokens = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault modeltest.Fault
		want  model.APIError // Err and RequestID are checked apart
	}{
		{"rate limit", modeltest.Fault{Status: 429, RetryAfter: "7"},
			model.APIError{Status: 429, Type: "rate_limit_exceeded", RetryAfter: 7 * time.Second}},
		{"quota", modeltest.Fault{Status: 429, Type: "insufficient_quota", Message: "out of credit"},
			model.APIError{Status: 429, Type: "insufficient_quota", Message: "out of credit"}},
		{"auth", modeltest.Fault{Status: 401}, model.APIError{Status: 401, Type: "invalid_api_key"}},
		{"no model", modeltest.Fault{Status: 404}, model.APIError{Status: 404, Type: "model_not_found"}},
		{"bad request", modeltest.Fault{Status: 400, Message: "bad"}, model.APIError{Status: 400, Type: "invalid_request_error", Message: "bad"}},
		{"server", modeltest.Fault{Status: 500}, model.APIError{Status: 500, Type: "server_error"}},
		{"unavailable", modeltest.Fault{Status: 503, RetryAfter: "1.5"}, model.APIError{Status: 503, Type: "server_error", RetryAfter: 1500 * time.Millisecond}},
		{"mid-stream", modeltest.Fault{StreamError: true, Message: "boom"}, model.APIError{Status: 200, Type: "server_error", Message: "boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newTestProvider(t, modeltest.Turn{Text: "unused", Fault: &tt.fault})
			_, err := p.Stream(context.Background(), weatherRequest(), nil)
			var got *model.APIError
			if !errors.As(err, &got) {
				t.Fatalf("err = %v (%T), want *model.APIError", err, err)
			}
			if got.Err == nil || (got.RequestID == "") != (tt.want.Status == 200) {
				t.Errorf("err %v, request id %q", got.Err, got.RequestID)
			}
			if tt.want.Message == "" {
				tt.want.Message = got.Message // the fake's default text
			}
			tt.want.Provider, tt.want.Err, tt.want.RequestID = "openai", got.Err, got.RequestID
			if *got != tt.want || got.Message == "" {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

func TestAPIErrorUnwrapsToSDK(t *testing.T) {
	p, _ := newTestProvider(t, modeltest.Turn{Fault: &modeltest.Fault{Status: 500}})
	_, err := p.Stream(context.Background(), weatherRequest(), nil)
	var sdkErr *sdk.Error
	if !errors.As(err, &sdkErr) || sdkErr.StatusCode != 500 {
		t.Errorf("err = %v, want it to unwrap to *openai.Error", err)
	}
}

func TestCutStream(t *testing.T) {
	p, _ := newTestProvider(t, modeltest.Turn{Text: "never finished", Fault: &modeltest.Fault{CutAfterStart: true}})
	var deltas int
	_, err := p.Stream(context.Background(), weatherRequest(), func(model.Delta) { deltas++ })
	var apiErr *model.APIError
	if err == nil || errors.As(err, &apiErr) || !strings.HasPrefix(err.Error(), "openai") {
		t.Errorf("err = %v, want a wrapped transport error", err)
	}
	if deltas != 0 {
		t.Errorf("got %d deltas from the cut stream, want 0", deltas)
	}
}

// An OpenAI-compatible server that stops without a finish_reason gave a
// partial answer, whatever the connection says.
func TestStreamEndedEarly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"half an"},"finish_reason":null}]}`+"\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	p := New(Config{BaseURL: srv.URL + "/v1"})
	res, err := p.Stream(context.Background(), weatherRequest(), nil)
	if err == nil || !strings.Contains(err.Error(), "stream ended early") {
		t.Errorf("got %+v, %v; want a stream ended early error", res, err)
	}
}

func TestCancelDuringDelay(t *testing.T) {
	p, srv := newTestProvider(t, modeltest.Turn{Text: "late", Fault: &modeltest.Fault{Delay: time.Hour}})
	ctx, cancel := context.WithCancel(context.Background())
	srv.OnRequest(func(*modeltest.Request) { cancel() }) // the request is in; give up on it
	start := time.Now()
	_, err := p.Stream(ctx, weatherRequest(), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("took %v to notice the cancel", d)
	}
}

func TestBadSchema(t *testing.T) {
	p := New(Config{APIKey: "k", BaseURL: "http://127.0.0.1:1/v1"})
	req := weatherRequest()
	req.Tools[0].Schema = json.RawMessage(`{nope`)
	if _, err := p.Stream(context.Background(), req, nil); err == nil || !strings.Contains(err.Error(), "get_weather") {
		t.Errorf("err = %v, want a schema error naming the tool", err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		ms, s string
		want  time.Duration
	}{
		{"", "", 0},
		{"250", "7", 250 * time.Millisecond},
		{"", "7", 7 * time.Second},
		{"", "0.5", 500 * time.Millisecond},
		{"", now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second},
		{"", now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"junk", "-3", 0},
		{"NaN", "Inf", 0},
		{"", "1e300", 0},
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

func TestArguments(t *testing.T) {
	tests := []struct{ in, want, back string }{
		{`{"a":1}`, `{"a":1}`, `{"a":1}`},
		{``, `{}`, `{}`},
		{`  `, `{}`, `{}`},
		{`{"a":`, `"{\"a\":"`, `{"a":`},
		{`not json`, `"not json"`, `not json`},
	}
	for _, tt := range tests {
		got := arguments(tt.in)
		if string(got) != tt.want || !json.Valid(got) {
			t.Errorf("arguments(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if back := argumentsString(got); back != tt.back {
			t.Errorf("argumentsString(%s) = %q, want %q", got, back, tt.back)
		}
	}
}
