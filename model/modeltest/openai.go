package modeltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/flower-run/flower/model"
)

// NewOpenAI starts a fake OpenAI Chat Completions server answering
// POST /v1/chat/completions. Point the SDK at OpenAIBaseURL.
func NewOpenAI(respond Responder) *Server {
	return newServer(respond, func(s *Server) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("POST /v1/chat/completions", s.oaiChat)
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			oaiWriteError(w, http.StatusNotFound, "invalid_request_error", "",
				fmt.Sprintf("Unknown request URL: %s %s.", r.Method, r.URL.Path))
		})
		return mux
	})
}

// OpenAIBaseURL is the base URL the OpenAI SDK wants: the server URL plus
// "/v1", like OPENAI_BASE_URL.
func (s *Server) OpenAIBaseURL() string { return s.URL + "/v1" }

// oaiRequestIDs numbers responses so every x-request-id is distinct, even
// for requests rejected before they are recorded.
var oaiRequestIDs atomic.Int64

func (s *Server) oaiChat(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("x-request-id", fmt.Sprintf("req_fake%06d", oaiRequestIDs.Add(1)))
	if !oaiAuthorized(r) {
		oaiWriteError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key",
			"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		oaiWriteError(w, http.StatusBadRequest, "invalid_request_error", "", "could not read the request body")
		return
	}
	req, opts, err := oaiParseRequest(body)
	if err != nil {
		oaiWriteError(w, http.StatusBadRequest, "invalid_request_error", "", err.Error())
		return
	}
	req.Path, req.Header = r.URL.Path, r.Header.Clone()
	turn := s.record(req)
	oaiAnswer(w, r, req, opts, turn)
}

func oaiAuthorized(r *http.Request) bool {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && strings.TrimSpace(key) != ""
}

// oaiOptions are the request fields that shape the answer but have no place
// in Request.
type oaiOptions struct {
	includeUsage bool
}

// oaiAnswer applies the turn's fault, if any, then answers.
func oaiAnswer(w http.ResponseWriter, r *http.Request, req *Request, opts oaiOptions, turn Turn) {
	f := turn.Fault
	if f != nil && f.Delay > 0 && !oaiWait(r, f.Delay) {
		return // the client gave up; nobody is left to answer
	}
	if f != nil && f.Stall {
		<-r.Context().Done() // the client's timeout ends it
		return
	}
	if f != nil && f.Status != 0 {
		oaiWriteFault(w, f)
		return
	}
	if !req.Stream {
		oaiWriteCompletion(w, req, turn)
		return
	}
	oaiStream(r.Context(), w, req, opts, turn)
}

// oaiWait waits d or until the request is cancelled, reporting whether the
// full delay passed.
func oaiWait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// oaiErrorDefaults are the type, code and message the real API uses for
// each status.
var oaiErrorDefaults = map[int][3]string{
	400: {"invalid_request_error", "", "Invalid request."},
	401: {"invalid_request_error", "invalid_api_key", "Incorrect API key provided."},
	403: {"invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported."},
	404: {"invalid_request_error", "model_not_found", "The model does not exist or you do not have access to it."},
	429: {"requests", "rate_limit_exceeded", "Rate limit reached for requests."},
	500: {"server_error", "", "The server had an error while processing your request. Sorry about that!"},
	503: {"server_error", "", "The engine is currently overloaded, please try again later."},
}

func oaiWriteFault(w http.ResponseWriter, f *Fault) {
	d, ok := oaiErrorDefaults[f.Status]
	if !ok {
		d = [3]string{"invalid_request_error", "", http.StatusText(f.Status)}
		if f.Status >= 500 {
			d[0] = "server_error"
		}
	}
	typ, code, msg := d[0], d[1], d[2]
	if f.Type != "" {
		// An override names what the client should see; the real API puts
		// such names (insufficient_quota, ...) in both type and code.
		typ, code = f.Type, f.Type
	}
	if f.Message != "" {
		msg = f.Message
	}
	if f.RetryAfter != "" {
		w.Header().Set("retry-after", f.RetryAfter)
	}
	oaiWriteError(w, f.Status, typ, code, msg)
}

// oaiErrorBody is the error envelope; code and param are null when empty.
func oaiErrorBody(typ, code, msg string) map[string]any {
	var c any
	if code != "" {
		c = code
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}}
}

func oaiWriteError(w http.ResponseWriter, status int, typ, code, msg string) {
	oaiWriteJSON(w, status, oaiErrorBody(typ, code, msg))
}

func oaiWriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("modeltest: marshal response: %v", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ---- request parsing ----

type oaiWireRequest struct {
	Model         string           `json:"model"`
	Messages      []oaiWireMessage `json:"messages"`
	Stream        bool             `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

type oaiWireMessage struct {
	Role       string            `json:"role"`
	Content    json.RawMessage   `json:"content"`
	ToolCalls  []oaiWireToolCall `json:"tool_calls"`
	ToolCallID string            `json:"tool_call_id"`
}

type oaiWireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// oaiParseRequest turns a request body into the neutral Request; its errors
// are the messages of a 400.
func oaiParseRequest(body []byte) (*Request, oaiOptions, error) {
	var wr oaiWireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		return nil, oaiOptions{}, fmt.Errorf("could not parse the JSON body of the request: %v", err)
	}
	req := &Request{Body: body, Model: wr.Model, Stream: wr.Stream}
	for _, t := range wr.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	system, msgs, err := oaiParseMessages(wr.Messages)
	if err != nil {
		return nil, oaiOptions{}, err
	}
	req.System, req.Messages = system, msgs
	opts := oaiOptions{includeUsage: wr.StreamOptions != nil && wr.StreamOptions.IncludeUsage}
	return req, opts, nil
}

// oaiParseMessages splits off the system text and folds tool messages back
// into user messages of tool results, the neutral (Anthropic) shape.
func oaiParseMessages(wms []oaiWireMessage) (string, []model.Message, error) {
	var system []string
	var msgs []model.Message
	for i, wm := range wms {
		text, err := oaiContentText(wm.Content)
		if err != nil {
			return "", nil, fmt.Errorf("invalid messages[%d].content: %v", i, err)
		}
		switch wm.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			msgs = append(msgs, model.Message{Role: model.User, Content: oaiTextBlocks(text)})
		case "assistant":
			msgs = append(msgs, oaiAssistantMessage(text, wm.ToolCalls))
		case "tool":
			msgs = oaiAppendToolResult(msgs, wm.ToolCallID, text)
		default:
			return "", nil, fmt.Errorf("invalid messages[%d].role: %q", i, wm.Role)
		}
	}
	return strings.Join(system, "\n\n"), msgs, nil
}

// oaiContentText reads content in any of its wire forms: absent, null, a
// string, or an array of parts (non-text parts are ignored).
func oaiContentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("expected a string, null or an array of content parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

func oaiTextBlocks(text string) []model.Block {
	if text == "" {
		return nil
	}
	return []model.Block{&model.Text{Text: text}}
}

func oaiAssistantMessage(text string, calls []oaiWireToolCall) model.Message {
	m := model.Message{Role: model.Assistant, Content: oaiTextBlocks(text)}
	for _, c := range calls {
		m.Content = append(m.Content, &model.ToolUse{
			ID: c.ID, Name: c.Function.Name, Input: oaiArgumentsJSON(c.Function.Arguments),
		})
	}
	return m
}

// oaiArgumentsJSON makes the arguments string raw JSON; arguments that are
// not JSON stay a JSON string so the Message still marshals.
func oaiArgumentsJSON(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	if strings.TrimSpace(args) == "" {
		return json.RawMessage(`{}`)
	}
	b, _ := json.Marshal(args) // a string always marshals
	return b
}

// oaiAppendToolResult adds a tool result to the last message when it is a
// user message of tool results (consecutive tool messages), else starts one.
func oaiAppendToolResult(msgs []model.Message, id, content string) []model.Message {
	res := &model.ToolResult{ToolUseID: id, Content: content}
	if n := len(msgs); n > 0 && msgs[n-1].Role == model.User && oaiAllToolResults(msgs[n-1]) {
		msgs[n-1].Content = append(msgs[n-1].Content, res)
		return msgs
	}
	return append(msgs, model.Message{Role: model.User, Content: []model.Block{res}})
}

func oaiAllToolResults(m model.Message) bool {
	for _, b := range m.Content {
		if _, ok := b.(*model.ToolResult); !ok {
			return false
		}
	}
	return len(m.Content) > 0
}

// ---- answers ----

// oaiAnswerParts is a turn resolved into wire values.
type oaiAnswerParts struct {
	id, model, finish string
	calls             []oaiWireToolCall
	usage             map[string]any
}

func oaiResolve(req *Request, turn Turn) oaiAnswerParts {
	p := oaiAnswerParts{id: fmt.Sprintf("chatcmpl-fake%d", req.N), model: req.Model}
	if p.model == "" {
		p.model = "gpt-4o-mini"
	}
	args := ""
	for i, tc := range turn.ToolCalls {
		c := oaiWireToolCall{ID: tc.ID, Type: "function"}
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_fake%d_%d", req.N, i)
		}
		c.Function.Name, c.Function.Arguments = tc.Name, string(inputOrEmpty(tc.Input))
		p.calls = append(p.calls, c)
		args += c.Function.Arguments
	}
	p.finish = oaiFinishReason(turn)
	p.usage = oaiUsage(req, turn, turn.Text+args)
	return p
}

// oaiFinishReason maps the neutral stop reason onto the wire's.
func oaiFinishReason(turn Turn) string {
	switch turn.Stop {
	case "":
		if len(turn.ToolCalls) > 0 {
			return "tool_calls"
		}
		return "stop"
	case model.StopEnd:
		return "stop"
	case model.StopToolUse:
		return "tool_calls"
	case model.StopMaxTokens:
		return "length"
	case model.StopRefusal:
		return "content_filter"
	}
	return turn.Stop
}

// oaiUsage reports prompt tokens including cached ones, as the real API does.
func oaiUsage(req *Request, turn Turn, output string) map[string]any {
	u := model.Usage{Input: estimateTokens(req.Body), Output: estimateTokens([]byte(output))}
	if turn.Usage != nil {
		u = *turn.Usage
	}
	prompt := u.Input + u.CacheRead + u.CacheCreation
	return map[string]any{
		"prompt_tokens":             prompt,
		"completion_tokens":         u.Output,
		"total_tokens":              prompt + u.Output,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CacheRead, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0},
	}
}

func oaiWriteCompletion(w http.ResponseWriter, req *Request, turn Turn) {
	if turn.Fault != nil && turn.Fault.StreamError {
		// A non-streaming answer has no frame to carry the error in; the
		// real API fails such a request with a 500.
		oaiWriteFault(w, &Fault{Status: 500, Type: turn.Fault.Type, Message: turn.Fault.Message})
		return
	}
	p := oaiResolve(req, turn)
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil, "annotations": []any{}}
	if turn.Text != "" {
		msg["content"] = turn.Text
	}
	if len(p.calls) > 0 {
		msg["tool_calls"] = p.calls
	}
	body := map[string]any{
		"id": p.id, "object": "chat.completion", "created": time.Now().Unix(), "model": p.model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": p.finish}},
		"usage":   p.usage, "system_fingerprint": "fp_fake",
	}
	if turn.Fault != nil && turn.Fault.CutAfterStart {
		oaiCut(w, body)
		return
	}
	oaiWriteJSON(w, http.StatusOK, body)
}

// oaiCut sends the headers and half the body, then drops the connection.
func oaiCut(w http.ResponseWriter, body any) {
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b[:len(b)/2])
	http.NewResponseController(w).Flush()
	panic(http.ErrAbortHandler) // net/http closes the connection without a clean end
}

// ---- streaming ----

// oaiSSE writes data-only SSE frames, flushing each so the client sees
// them as they are sent.
type oaiSSE struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	done <-chan struct{} // the request's context ends: the client left
}

func (e *oaiSSE) frame(data []byte) {
	_, _ = fmt.Fprintf(e.w, "data: %s\n\n", data)
	_ = e.rc.Flush()
}

func (e *oaiSSE) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("modeltest: marshal chunk: %v", err))
	}
	e.frame(b)
}

type oaiChunk struct {
	ID                string           `json:"id"`
	Object            string           `json:"object"`
	Created           int64            `json:"created"`
	Model             string           `json:"model"`
	SystemFingerprint string           `json:"system_fingerprint"`
	Choices           []oaiChunkChoice `json:"choices"`
	Usage             json.RawMessage  `json:"usage,omitempty"`
}

type oaiChunkChoice struct {
	Index        int            `json:"index"`
	Delta        map[string]any `json:"delta"`
	Logprobs     any            `json:"logprobs"`
	FinishReason *string        `json:"finish_reason"`
}

// oaiChunker stamps chunks with the fields every chunk repeats.
type oaiChunker struct {
	p       oaiAnswerParts
	created int64
	usage   json.RawMessage // "null" on every chunk when usage was asked for
}

func (c oaiChunker) delta(d map[string]any, finish *string) oaiChunk {
	return oaiChunk{
		ID: c.p.id, Object: "chat.completion.chunk", Created: c.created, Model: c.p.model,
		SystemFingerprint: "fp_fake", Usage: c.usage,
		Choices: []oaiChunkChoice{{Index: 0, Delta: d, FinishReason: finish}},
	}
}

func oaiStream(ctx context.Context, w http.ResponseWriter, req *Request, opts oaiOptions, turn Turn) {
	done := ctx.Done()
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	e := &oaiSSE{w: w, rc: http.NewResponseController(w), done: done}
	c := oaiChunker{p: oaiResolve(req, turn), created: time.Now().Unix()}
	if opts.includeUsage {
		c.usage = json.RawMessage("null")
	}
	e.send(c.delta(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
	if oaiStreamFault(e, turn.Fault) {
		return
	}
	pace := &pacer{ctx: ctx, pace: turn.Pace}
	for _, piece := range oaiSplitText(turn.Text) {
		pace.next()
		e.send(c.delta(map[string]any{"content": piece}, nil))
	}
	for i, call := range c.p.calls {
		oaiSendToolCall(e, c, i, call)
	}
	e.send(c.delta(map[string]any{}, &c.p.finish))
	if opts.includeUsage {
		last := c.delta(nil, nil)
		last.Choices, last.Usage = []oaiChunkChoice{}, oaiMustJSON(c.p.usage)
		e.send(last)
	}
	e.frame([]byte("[DONE]"))
}

// oaiStreamFault disturbs the stream after its first chunk, reporting
// whether it ended it.
func oaiStreamFault(e *oaiSSE, f *Fault) bool {
	switch {
	case f == nil:
		return false
	case f.CutAfterStart:
		panic(http.ErrAbortHandler) // drop the connection mid-stream
	case f.StallAfterStart:
		<-e.done
		return true
	case f.StreamError:
		typ, msg := "server_error", "The server had an error while processing your request. Sorry about that!"
		if f.Type != "" {
			typ = f.Type
		}
		if f.Message != "" {
			msg = f.Message
		}
		e.send(oaiErrorBody(typ, "", msg))
		return true
	}
	return false
}

// oaiSendToolCall streams one call as the real API does: a first delta
// with the id, name and empty arguments, then argument fragments.
func oaiSendToolCall(e *oaiSSE, c oaiChunker, i int, call oaiWireToolCall) {
	first := map[string]any{"index": i, "id": call.ID, "type": "function",
		"function": map[string]any{"name": call.Function.Name, "arguments": ""}}
	e.send(c.delta(map[string]any{"tool_calls": []any{first}}, nil))
	for _, frag := range oaiHalves(call.Function.Arguments) {
		next := map[string]any{"index": i, "function": map[string]any{"arguments": frag}}
		e.send(c.delta(map[string]any{"tool_calls": []any{next}}, nil))
	}
}

// oaiSplitText cuts text into word pieces, and a lone word in halves, so
// clients must join several deltas.
func oaiSplitText(text string) []string {
	if text == "" {
		return nil
	}
	pieces := strings.SplitAfter(text, " ")
	if len(pieces) > 1 && pieces[len(pieces)-1] == "" {
		pieces = pieces[:len(pieces)-1]
	}
	if len(pieces) == 1 {
		return oaiHalves(text)
	}
	return pieces
}

// oaiHalves splits s in two at a rune boundary; a one-rune s stays whole.
func oaiHalves(s string) []string {
	n := utf8.RuneCountInString(s)
	if n < 2 {
		return []string{s}
	}
	cut := 0
	for i := 0; i < n/2; i++ {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	return []string{s[:cut], s[cut:]}
}

func oaiMustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("modeltest: marshal: %v", err))
	}
	return b
}
