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

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/flower-run/flower/model"
)

func oaiTestClient(srv *Server) openai.Client {
	return openai.NewClient(option.WithBaseURL(srv.OpenAIBaseURL()),
		option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
}

func oaiTestParams() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model: "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("You are terse."), openai.UserMessage("Weather in Paris?")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name:       "get_weather",
			Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		})},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
}

// oaiStreamAll runs a streaming call, returning the accumulation and the
// chunks seen.
func oaiStreamAll(t *testing.T, srv *Server, params openai.ChatCompletionNewParams) (*openai.ChatCompletionAccumulator, []openai.ChatCompletionChunk, error) {
	t.Helper()
	client := oaiTestClient(srv)
	stream := client.Chat.Completions.NewStreaming(context.Background(), params)
	defer stream.Close()
	acc := &openai.ChatCompletionAccumulator{}
	var chunks []openai.ChatCompletionChunk
	for stream.Next() {
		chunks = append(chunks, stream.Current())
		if !acc.AddChunk(stream.Current()) {
			t.Fatalf("accumulator rejected chunk %d", len(chunks))
		}
	}
	return acc, chunks, stream.Err()
}

func TestOpenAIStreamTextAndToolCalls(t *testing.T) {
	srv := NewOpenAI(Script(Turn{
		Text: "Checking the weather.",
		ToolCalls: []ToolCall{
			{ID: "call_abc", Name: "get_weather", Input: `{"city":"Paris"}`},
			{Name: "get_time", Input: `{"tz":"CET"}`},
		},
		Usage: &model.Usage{Input: 18, CacheRead: 32, Output: 20},
	}))
	defer srv.Close()

	acc, chunks, err := oaiStreamAll(t, srv, oaiTestParams())
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	choice := acc.Choices[0]
	if got, want := choice.Message.Content, "Checking the weather."; got != want {
		t.Errorf("content = %q, want %q", got, want)
	}
	if got, want := choice.FinishReason, "tool_calls"; got != want {
		t.Errorf("finish_reason = %q, want %q", got, want)
	}
	calls := choice.Message.ToolCalls
	if len(calls) != 2 {
		t.Fatalf("got %d tool calls, want 2", len(calls))
	}
	for i, want := range [][3]string{{"call_abc", "get_weather", `{"city":"Paris"}`}, {"", "get_time", `{"tz":"CET"}`}} {
		got := calls[i]
		if want[0] != "" && got.ID != want[0] || !strings.HasPrefix(got.ID, "call_") {
			t.Errorf("call %d id = %q, want %q", i, got.ID, want[0])
		}
		if got.Function.Name != want[1] || got.Function.Arguments != want[2] {
			t.Errorf("call %d = %s(%s), want %s(%s)", i, got.Function.Name, got.Function.Arguments, want[1], want[2])
		}
	}
	if calls[0].ID == calls[1].ID {
		t.Errorf("tool call ids collide: %q", calls[0].ID)
	}
	u := acc.Usage
	got := [4]int64{u.PromptTokens, u.PromptTokensDetails.CachedTokens, u.CompletionTokens, u.TotalTokens}
	if want := [4]int64{50, 32, 20, 70}; got != want {
		t.Errorf("usage prompt/cached/completion/total = %v, want %v", got, want)
	}
	oaiCheckChunkShapes(t, chunks)
}

// oaiCheckChunkShapes checks the stream is made the way clients must cope
// with: text over several deltas, arguments over several fragments, and a
// usage chunk without choices.
func oaiCheckChunkShapes(t *testing.T, chunks []openai.ChatCompletionChunk) {
	t.Helper()
	textDeltas, argFragments := 0, 0
	for _, c := range chunks {
		for _, ch := range c.Choices {
			if ch.Delta.Content != "" {
				textDeltas++
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.ID != "" && tc.Function.Arguments != "" {
					t.Errorf("first delta of %s carries arguments %q", tc.ID, tc.Function.Arguments)
				}
				if tc.Function.Arguments != "" {
					argFragments++
				}
			}
		}
	}
	if textDeltas < 2 {
		t.Errorf("text came in %d deltas, want 2 or more", textDeltas)
	}
	if argFragments < 4 {
		t.Errorf("arguments came in %d fragments, want 2 or more per call", argFragments)
	}
	if last := chunks[len(chunks)-1]; len(last.Choices) != 0 || last.Usage.TotalTokens == 0 {
		t.Errorf("last chunk has %d choices and usage %d, want the usage chunk", len(last.Choices), last.Usage.TotalTokens)
	}
}

func TestOpenAIFinishReasons(t *testing.T) {
	tests := []struct {
		name string
		turn Turn
		want string
	}{
		{"text", Turn{Text: "hi"}, "stop"},
		{"tools", Turn{ToolCalls: []ToolCall{{Name: "ls"}}}, "tool_calls"},
		{"max tokens", Turn{Text: "cut", Stop: model.StopMaxTokens}, "length"},
		{"raw", Turn{Text: "x", Stop: "content_filter"}, "content_filter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewOpenAI(Script(tt.turn))
			defer srv.Close()
			acc, _, err := oaiStreamAll(t, srv, oaiTestParams())
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			if got := acc.Choices[0].FinishReason; got != tt.want {
				t.Errorf("finish_reason = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOpenAIStreamWithoutUsage(t *testing.T) {
	srv := NewOpenAI(Script(Turn{Text: "hello there"}))
	defer srv.Close()
	params := oaiTestParams()
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	_, chunks, err := oaiStreamAll(t, srv, params)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	for i, c := range chunks {
		if len(c.Choices) == 0 || c.JSON.Usage.Valid() {
			t.Errorf("chunk %d: %d choices, usage %q; want no usage chunk", i, len(c.Choices), c.JSON.Usage.Raw())
		}
	}
}

func TestOpenAINonStreaming(t *testing.T) {
	srv := NewOpenAI(Script(
		Turn{Text: "Sunny."},
		Turn{ToolCalls: []ToolCall{{ID: "call_x", Name: "get_weather", Input: `{"city":"Oslo"}`}},
			Usage: &model.Usage{Input: 4, CacheRead: 6, Output: 5}},
	))
	defer srv.Close()
	client := oaiTestClient(srv)

	res, err := client.Chat.Completions.New(context.Background(), oaiTestParams())
	if err != nil {
		t.Fatalf("first call: %v", err)
	}
	wantPrompt := int64(estimateTokens(srv.Requests()[0].Body))
	if c := res.Choices[0]; c.Message.Content != "Sunny." || c.FinishReason != "stop" || res.Usage.PromptTokens != wantPrompt {
		t.Errorf("got %q %q prompt=%d, want %q stop prompt=%d", c.Message.Content, c.FinishReason, res.Usage.PromptTokens, "Sunny.", wantPrompt)
	}
	if srv.Requests()[0].Stream {
		t.Error("non-streaming request recorded as streaming")
	}

	res, err = client.Chat.Completions.New(context.Background(), oaiTestParams())
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	c := res.Choices[0]
	if c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Arguments != `{"city":"Oslo"}` {
		t.Errorf("got finish %q calls %+v, want one get_weather call", c.FinishReason, c.Message.ToolCalls)
	}
	if got := [2]int64{res.Usage.PromptTokens, res.Usage.PromptTokensDetails.CachedTokens}; got != [2]int64{10, 6} {
		t.Errorf("prompt/cached = %v, want [10 6]", got)
	}
}

func TestOpenAIStatusFaults(t *testing.T) {
	tests := []struct {
		name                 string
		fault                Fault
		wantType, wantCode   string
		wantRetry, wantInMsg string
	}{
		{"bad request", Fault{Status: 400}, "invalid_request_error", "", "", ""},
		{"auth", Fault{Status: 401}, "invalid_request_error", "invalid_api_key", "", ""},
		{"no model", Fault{Status: 404}, "invalid_request_error", "model_not_found", "", ""},
		{"rate limit", Fault{Status: 429, RetryAfter: "7"}, "requests", "rate_limit_exceeded", "7", ""},
		{"quota", Fault{Status: 429, Type: "insufficient_quota", Message: "quota gone"}, "insufficient_quota", "insufficient_quota", "", "quota gone"},
		{"server", Fault{Status: 500}, "server_error", "", "", ""},
		{"overloaded", Fault{Status: 503}, "server_error", "", "", ""},
	}
	for _, tt := range tests {
		for _, stream := range []bool{true, false} {
			t.Run(tt.name+map[bool]string{true: "/stream", false: "/plain"}[stream], func(t *testing.T) {
				srv := NewOpenAI(Script(Turn{Fault: &tt.fault}))
				defer srv.Close()
				err := oaiCall(t, srv, stream)
				var apiErr *openai.Error
				if !errors.As(err, &apiErr) {
					t.Fatalf("err = %v (%T), want *openai.Error", err, err)
				}
				if apiErr.StatusCode != tt.fault.Status || apiErr.Type != tt.wantType || apiErr.Code != tt.wantCode {
					t.Errorf("got %d %q %q, want %d %q %q", apiErr.StatusCode, apiErr.Type, apiErr.Code, tt.fault.Status, tt.wantType, tt.wantCode)
				}
				if got := apiErr.Response.Header.Get("retry-after"); got != tt.wantRetry {
					t.Errorf("retry-after = %q, want %q", got, tt.wantRetry)
				}
				if apiErr.Response.Header.Get("x-request-id") == "" || apiErr.Message == "" {
					t.Errorf("x-request-id %q, message %q: want both", apiErr.Response.Header.Get("x-request-id"), apiErr.Message)
				}
				if !strings.Contains(apiErr.Message, tt.wantInMsg) {
					t.Errorf("message %q does not contain %q", apiErr.Message, tt.wantInMsg)
				}
			})
		}
	}
}

// oaiCall makes one call, streaming or not, and returns its error.
func oaiCall(t *testing.T, srv *Server, stream bool) error {
	t.Helper()
	if stream {
		_, _, err := oaiStreamAll(t, srv, oaiTestParams())
		return err
	}
	client := oaiTestClient(srv)
	_, err := client.Chat.Completions.New(context.Background(), oaiTestParams())
	return err
}

func TestOpenAIStreamErrorFrame(t *testing.T) {
	srv := NewOpenAI(Script(Turn{Text: "never sent", Fault: &Fault{StreamError: true}}))
	defer srv.Close()
	acc, chunks, err := oaiStreamAll(t, srv, oaiTestParams())
	var se *ssestream.StreamError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want *ssestream.StreamError", err, err)
	}
	var body struct {
		Error struct{ Type, Message string }
	}
	if err := json.Unmarshal(se.Event.Data, &body); err != nil || body.Error.Type != "server_error" {
		t.Errorf("error frame %q: type %q, want server_error (%v)", se.Event.Data, body.Error.Type, err)
	}
	if len(chunks) != 1 || acc.Choices[0].Message.Content != "" {
		t.Errorf("got %d chunks, content %q; want only the first chunk", len(chunks), acc.Choices[0].Message.Content)
	}
}

func TestOpenAICutStream(t *testing.T) {
	for _, stream := range []bool{true, false} {
		srv := NewOpenAI(Script(Turn{Text: "never finished", Fault: &Fault{CutAfterStart: true}}))
		err := oaiCall(t, srv, stream)
		srv.Close()
		if err == nil {
			t.Errorf("stream=%v: cut answer gave no error", stream)
		}
		var apiErr *openai.Error
		if errors.As(err, &apiErr) {
			t.Errorf("stream=%v: cut answer gave an API error %v, want a transport error", stream, err)
		}
	}
}

func TestOpenAIDelayHonoursCancel(t *testing.T) {
	srv := NewOpenAI(Script(Turn{Text: "late", Fault: &Fault{Delay: time.Hour}}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	srv.OnRequest(func(*Request) { cancel() }) // the request is in; give up on it
	client := oaiTestClient(srv)
	stream := client.Chat.Completions.NewStreaming(ctx, oaiTestParams())
	for stream.Next() {
	}
	if err := stream.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestOpenAIDelayThenAnswer(t *testing.T) {
	srv := NewOpenAI(Script(Turn{Text: "ok then", Fault: &Fault{Delay: time.Millisecond}}))
	defer srv.Close()
	acc, _, err := oaiStreamAll(t, srv, oaiTestParams())
	if err != nil || acc.Choices[0].Message.Content != "ok then" {
		t.Errorf("got %v, want the answer after the delay", err)
	}
}

func TestOpenAIRejectsBadRequests(t *testing.T) {
	tests := []struct {
		name, auth, body string
		wantStatus       int
		wantCode         string
	}{
		{"no key", "", `{"model":"m","messages":[]}`, 401, "invalid_api_key"},
		{"not bearer", "Basic abc", `{"model":"m","messages":[]}`, 401, "invalid_api_key"},
		{"bad json", "Bearer sk", `{"model":`, 400, ""},
		{"bad content", "Bearer sk", `{"model":"m","messages":[{"role":"user","content":7}]}`, 400, ""},
		{"bad role", "Bearer sk", `{"model":"m","messages":[{"role":"robot","content":"hi"}]}`, 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewOpenAI(Script(Turn{Text: "unused"}))
			defer srv.Close()
			status, body := oaiRawPost(t, srv, tt.auth, tt.body)
			var e struct {
				Error struct {
					Message, Type string
					Code          *string
				}
			}
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("error body %q: %v", body, err)
			}
			code := ""
			if e.Error.Code != nil {
				code = *e.Error.Code
			}
			if status != tt.wantStatus || code != tt.wantCode || e.Error.Message == "" || e.Error.Type != "invalid_request_error" {
				t.Errorf("got %d %s, want %d code %q", status, body, tt.wantStatus, tt.wantCode)
			}
			if srv.Count() != 0 {
				t.Errorf("rejected request was recorded")
			}
		})
	}
}

func oaiRawPost(t *testing.T, srv *Server, auth, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", srv.OpenAIBaseURL()+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

func TestOpenAIRecordsFollowUpTurn(t *testing.T) {
	srv := NewOpenAI(Script(
		Turn{Text: "Checking.", ToolCalls: []ToolCall{
			{ID: "call_abc", Name: "get_weather", Input: `{"city":"Paris"}`},
			{ID: "call_def", Name: "get_time", Input: `{"tz":"CET"}`}}},
		Turn{Text: "18C and noon."},
	))
	defer srv.Close()
	params := oaiTestParams()
	acc, _, err := oaiStreamAll(t, srv, params)
	if err != nil {
		t.Fatalf("first turn: %v", err)
	}
	params.Messages = append(params.Messages, acc.Choices[0].Message.ToParam(),
		openai.ToolMessage("18C sunny", "call_abc"), openai.ToolMessage("12:00", "call_def"),
		openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart("Thanks"), openai.TextContentPart("!")}))
	if _, _, err := oaiStreamAll(t, srv, params); err != nil {
		t.Fatalf("second turn: %v", err)
	}

	r := srv.Requests()[1]
	want := []model.Message{
		{Role: model.User, Content: []model.Block{&model.Text{Text: "Weather in Paris?"}}},
		{Role: model.Assistant, Content: []model.Block{&model.Text{Text: "Checking."},
			&model.ToolUse{ID: "call_abc", Name: "get_weather", Input: json.RawMessage(`{"city":"Paris"}`)},
			&model.ToolUse{ID: "call_def", Name: "get_time", Input: json.RawMessage(`{"tz":"CET"}`)}}},
		{Role: model.User, Content: []model.Block{
			&model.ToolResult{ToolUseID: "call_abc", Content: "18C sunny"},
			&model.ToolResult{ToolUseID: "call_def", Content: "12:00"}}},
		{Role: model.User, Content: []model.Block{&model.Text{Text: "Thanks!"}}},
	}
	if got, want := oaiJSON(t, r.Messages), oaiJSON(t, want); got != want {
		t.Errorf("messages:\n got %s\nwant %s", got, want)
	}
	if r.System != "You are terse." || r.Model != "gpt-4o-mini" || !r.Stream || r.N != 2 {
		t.Errorf("got system %q model %q stream %v n %d", r.System, r.Model, r.Stream, r.N)
	}
	if len(r.Tools) != 1 || r.Tools[0] != "get_weather" || r.Path != "/v1/chat/completions" {
		t.Errorf("got tools %v path %q", r.Tools, r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("authorization = %q", got)
	}
}

func oaiJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOpenAIParseMessages(t *testing.T) {
	tests := []struct {
		name, messages string
		wantSystem     string
		want           string // the messages as model JSON
	}{
		{"null content", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}]`,
			"", `[{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"f","input":{}}]}]`},
		{"bad arguments", `[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{oops"}}]}]`,
			"", `[{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"f","input":"{oops"}]}]`},
		{"parts", `[{"role":"system","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"role":"developer","content":"c"},{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"x"}}]}]`,
			"ab\n\nc", `[{"role":"user","content":[{"type":"text","text":"hi"}]}]`},
		{"split tool runs", `[{"role":"tool","tool_call_id":"a","content":"1"},{"role":"user","content":"x"},{"role":"tool","tool_call_id":"b","content":"2"}]`,
			"", `[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"1"}]},{"role":"user","content":[{"type":"text","text":"x"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"b","content":"2"}]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var wms []oaiWireMessage
			if err := json.Unmarshal([]byte(tt.messages), &wms); err != nil {
				t.Fatal(err)
			}
			system, msgs, err := oaiParseMessages(wms)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if got := oaiJSON(t, msgs); got != tt.want || system != tt.wantSystem {
				t.Errorf("got %q %s, want %q %s", system, got, tt.wantSystem, tt.want)
			}
		})
	}
}
