package modeltest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/flower-run/flower/model"
)

// NewAnthropic starts a fake Anthropic Messages API: POST /v1/messages
// (streaming or not) and POST /v1/messages/count_tokens. Pass its URL to the
// SDK's option.WithBaseURL as is.
func NewAnthropic(respond Responder) *Server {
	return newServer(respond, func(s *Server) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
			newAnthExchange(w, r).messages(s)
		})
		mux.HandleFunc("POST /v1/messages/count_tokens", func(w http.ResponseWriter, r *http.Request) {
			newAnthExchange(w, r).countTokens()
		})
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			newAnthExchange(w, r).fail(http.StatusNotFound, "", "Not found: "+r.Method+" "+r.URL.Path, "")
		})
		return mux
	})
}

// anthMaxBody is the API's request size limit; larger bodies get a 413.
const anthMaxBody = 32 << 20

// anthSeq numbers the ids the fake hands out, unique across servers so
// that tests running several fakes never see a repeated id.
var anthSeq atomic.Int64

func anthID(prefix string) string {
	return fmt.Sprintf("%s%016d", prefix, anthSeq.Add(1))
}

// anthExchange is one HTTP request being answered.
type anthExchange struct {
	w     http.ResponseWriter
	r     *http.Request
	reqID string
}

func newAnthExchange(w http.ResponseWriter, r *http.Request) *anthExchange {
	x := &anthExchange{w: w, r: r, reqID: anthID("req_fake")}
	w.Header().Set("request-id", x.reqID)
	return x
}

// messages serves POST /v1/messages.
func (x *anthExchange) messages(s *Server) {
	body, ok := x.readRequest()
	if !ok {
		return
	}
	req, err := parseAnthropic(body, true)
	if err != nil {
		x.fail(http.StatusBadRequest, "", err.Error(), "")
		return
	}
	req.Path, req.Header, req.Body = x.r.URL.Path, x.r.Header.Clone(), body
	x.answer(req, s.record(req))
}

// countTokens serves POST /v1/messages/count_tokens. It is not recorded:
// it does not consume a scripted turn.
func (x *anthExchange) countTokens() {
	body, ok := x.readRequest()
	if !ok {
		return
	}
	if _, err := parseAnthropic(body, false); err != nil {
		x.fail(http.StatusBadRequest, "", err.Error(), "")
		return
	}
	x.writeJSON(http.StatusOK, map[string]any{"input_tokens": estimateTokens(body)})
}

// readRequest checks the credentials and reads the body, answering the
// error itself when either is wrong.
func (x *anthExchange) readRequest() ([]byte, bool) {
	if anthKey(x.r.Header) == "" {
		x.fail(http.StatusUnauthorized, "",
			"missing credentials: send an x-api-key header or Authorization: Bearer <key>", "")
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(x.w, x.r.Body, anthMaxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		x.fail(http.StatusRequestEntityTooLarge, "", "", "")
		return nil, false
	case err != nil:
		x.fail(http.StatusBadRequest, "", "cannot read request body: "+err.Error(), "")
		return nil, false
	}
	return body, true
}

// anthKey is the API key of a request: SDK v2 sends it as a bearer token,
// raw clients and SDK v1 as x-api-key.
func anthKey(h http.Header) string {
	if k := h.Get("x-api-key"); k != "" {
		return k
	}
	f := strings.Fields(h.Get("Authorization"))
	if len(f) == 2 && strings.EqualFold(f[0], "Bearer") {
		return f[1]
	}
	return ""
}

// answer plays the turn: its fault first, then the message.
func (x *anthExchange) answer(req *Request, t Turn) {
	f := t.Fault
	if f == nil {
		f = &Fault{}
	}
	if f.Delay > 0 && !anthWait(x.r.Context(), f.Delay) {
		return // the client went away
	}
	if f.Stall {
		<-x.r.Context().Done() // the client's timeout ends it
		return
	}
	if f.Status != 0 {
		x.fail(f.Status, f.Type, f.Message, f.RetryAfter)
		return
	}
	blocks, err := anthBlocksOf(t)
	if err != nil {
		x.fail(http.StatusInternalServerError, "", err.Error(), "")
		return
	}
	a := &anthAnswer{id: anthID("msg_fake"), model: req.Model, blocks: blocks,
		stop: anthStop(t), usage: anthUsage(t, req.Body, blocks), pace: &pacer{ctx: x.r.Context(), pace: t.Pace}}
	switch {
	case req.Stream:
		x.stream(a, f)
	case f.StreamError: // no stream to break: fail as the API does before one
		x.fail(529, f.Type, f.Message, f.RetryAfter)
	default:
		x.reply(a, f.CutAfterStart)
	}
}

// anthWait waits d, or until ctx is done; it reports whether d elapsed.
func anthWait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// anthAbort drops the connection mid-response. The server recovers this
// panic silently and closes the connection without ending the body, so the
// client sees a truncated response.
func anthAbort() { panic(http.ErrAbortHandler) }

// reply sends a non-streaming message, or half of it when cut.
func (x *anthExchange) reply(a *anthAnswer, cut bool) {
	data, err := json.Marshal(a.message(true))
	if err != nil {
		x.fail(http.StatusInternalServerError, "", "modeltest: "+err.Error(), "")
		return
	}
	if !cut {
		x.writeRaw(http.StatusOK, data)
		return
	}
	x.w.Header().Set("Content-Type", "application/json")
	x.w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	x.w.WriteHeader(http.StatusOK)
	x.w.Write(data[:len(data)/2])
	x.w.(http.Flusher).Flush()
	anthAbort()
}

// stream sends the answer as server-sent events, disturbed by f.
func (x *anthExchange) stream(a *anthAnswer, f *Fault) {
	sse := x.startSSE()
	sse.send("message_start", map[string]any{"type": "message_start", "message": a.message(false)})
	if f.CutAfterStart {
		anthAbort()
	}
	if f.StallAfterStart {
		<-x.r.Context().Done()
		return
	}
	sse.send("ping", map[string]any{"type": "ping"})
	if f.StreamError {
		x.streamError(sse, a, f)
		return
	}
	for i, b := range a.blocks {
		b.stream(sse, i, a.pace)
	}
	sse.send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": a.stop, "stop_sequence": nil},
		"usage": anthUsageJSON(a.usage, a.usage.Output)})
	sse.send("message_stop", map[string]any{"type": "message_stop"})
}

// streamError starts a text block, then breaks the stream with an error
// event, as the API does when it overloads mid-answer.
func (x *anthExchange) streamError(sse anthSSE, a *anthAnswer, f *Fault) {
	text := anthBlock{kind: "text", text: "Let me"}
	for _, b := range a.blocks {
		if b.kind == "text" {
			text.text = anthChunks(b.text)[0]
			break
		}
	}
	sse.send("content_block_start", map[string]any{"type": "content_block_start",
		"index": 0, "content_block": text.start()})
	sse.send("content_block_delta", anthDelta(0, map[string]any{"type": "text_delta", "text": text.text}))
	typ, msg := anthErrorText(529, f.Type, f.Message)
	sse.send("error", x.errorBody(typ, msg))
}

// fail answers with the API's error body. Empty typ and msg take the
// defaults for status; a 429 without retryAfter gets "1".
func (x *anthExchange) fail(status int, typ, msg, retryAfter string) {
	typ, msg = anthErrorText(status, typ, msg)
	if retryAfter == "" && status == http.StatusTooManyRequests {
		retryAfter = "1"
	}
	if retryAfter != "" {
		x.w.Header().Set("retry-after", retryAfter)
	}
	x.writeJSON(status, x.errorBody(typ, msg))
}

func (x *anthExchange) errorBody(typ, msg string) map[string]any {
	return map[string]any{"type": "error",
		"error":      map[string]any{"type": typ, "message": msg},
		"request_id": x.reqID}
}

// anthErrorText fills in the API's error type and message for status.
func anthErrorText(status int, typ, msg string) (string, string) {
	if typ == "" {
		typ = anthErrorTypes[status]
	}
	if typ == "" && status >= 500 {
		typ = "api_error"
	}
	if typ == "" {
		typ = "invalid_request_error"
	}
	if msg == "" {
		msg = anthErrorMessages[typ]
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return typ, msg
}

var anthErrorTypes = map[int]string{
	400: "invalid_request_error",
	401: "authentication_error",
	402: "billing_error",
	403: "permission_error",
	404: "not_found_error",
	409: "conflict_error",
	413: "request_too_large",
	429: "rate_limit_error",
	500: "api_error",
	504: "timeout_error",
	529: "overloaded_error",
}

var anthErrorMessages = map[string]string{
	"authentication_error": "invalid x-api-key",
	"permission_error":     "Your API key does not have permission to use the specified resource.",
	"request_too_large":    "Request exceeds the maximum allowed number of bytes.",
	"rate_limit_error":     "Number of request tokens has exceeded your per-minute rate limit",
	"api_error":            "Internal server error",
	"timeout_error":        "Request timed out",
	"overloaded_error":     "Overloaded",
}

func (x *anthExchange) writeJSON(status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"type":"error","error":{"type":"api_error","message":"modeltest: cannot encode answer"}}`)
	}
	x.writeRaw(status, data)
}

func (x *anthExchange) writeRaw(status int, data []byte) {
	x.w.Header().Set("Content-Type", "application/json")
	x.w.WriteHeader(status)
	x.w.Write(data)
}

// anthSSE writes server-sent events, flushing each so the client sees the
// stream as it is produced.
type anthSSE struct {
	w http.ResponseWriter
	f http.Flusher
}

func (x *anthExchange) startSSE() anthSSE {
	x.w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	x.w.Header().Set("Cache-Control", "no-cache")
	x.w.WriteHeader(http.StatusOK)
	return anthSSE{w: x.w, f: x.w.(http.Flusher)}
}

// send writes one event. The SDK drops frames without an event line, so
// every frame names its event, which is also the "type" of its data.
func (e anthSSE) send(event string, data map[string]any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("modeltest: encode %s event: %v", event, err)) // data is built here: a bug
	}
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", event, b)
	e.f.Flush()
}

// anthAnswer is a scripted turn made concrete: ids, blocks, stop reason
// and usage.
type anthAnswer struct {
	id, model string
	blocks    []anthBlock
	stop      string
	usage     model.Usage
	pace      *pacer
}

// message is the message object: complete for a non-streaming answer, or
// the empty shell that message_start carries.
func (a *anthAnswer) message(complete bool) map[string]any {
	m := map[string]any{"id": a.id, "type": "message", "role": "assistant", "model": a.model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": anthUsageJSON(a.usage, 1)}
	if complete {
		content := make([]any, len(a.blocks))
		for i, b := range a.blocks {
			content[i] = b.full()
		}
		m["content"], m["stop_reason"] = content, a.stop
		m["usage"] = anthUsageJSON(a.usage, a.usage.Output)
	}
	return m
}

// anthUsageJSON is the usage object with output tokens so far: message_start
// reports 1, the end of the answer the total.
func anthUsageJSON(u model.Usage, output int) map[string]any {
	return map[string]any{"input_tokens": u.Input, "output_tokens": output,
		"cache_read_input_tokens":     u.CacheRead,
		"cache_creation_input_tokens": u.CacheCreation}
}

func anthStop(t Turn) string {
	switch {
	case t.Stop != "":
		return t.Stop
	case len(t.ToolCalls) > 0:
		return model.StopToolUse
	default:
		return model.StopEnd
	}
}

// anthUsage is the turn's usage, or by default the request's estimated
// size as input and a token for every four characters produced as output.
func anthUsage(t Turn, body []byte, blocks []anthBlock) model.Usage {
	if t.Usage != nil {
		return *t.Usage
	}
	chars := 0
	for _, b := range blocks {
		chars += len(b.text) + len(b.input)
	}
	return model.Usage{Input: estimateTokens(body), Output: chars/4 + 1}
}

// anthBlock is one content block of an answer.
type anthBlock struct {
	kind      string // "thinking", "text" or "tool_use"
	text      string // the text, or the thinking
	signature string
	id, name  string
	input     string // tool input, JSON
}

// anthBlocksOf lays out a turn's blocks in the API's order: thinking,
// text, tool calls.
func anthBlocksOf(t Turn) ([]anthBlock, error) {
	var out []anthBlock
	if t.Thinking != "" {
		out = append(out, anthBlock{kind: "thinking", text: t.Thinking, signature: anthSignature(t.Thinking)})
	}
	if t.Text != "" {
		out = append(out, anthBlock{kind: "text", text: t.Text})
	}
	for _, c := range t.ToolCalls {
		in := inputOrEmpty(c.Input)
		if !json.Valid(in) {
			return nil, fmt.Errorf("modeltest: input of scripted tool call %q is not JSON: %s", c.Name, c.Input)
		}
		id := c.ID
		if id == "" {
			id = anthID("toolu_fake")
		}
		out = append(out, anthBlock{kind: "tool_use", id: id, name: c.Name, input: string(in)})
	}
	return out, nil
}

// anthSignature is a stable stand-in for the API's opaque thinking
// signature, so tests can check it round-trips.
func anthSignature(thinking string) string {
	sum := sha256.Sum256([]byte(thinking))
	return "sig-" + hex.EncodeToString(sum[:8])
}

// full is the block as a non-streaming answer shows it.
func (b anthBlock) full() map[string]any {
	switch b.kind {
	case "thinking":
		return map[string]any{"type": "thinking", "thinking": b.text, "signature": b.signature}
	case "text":
		return map[string]any{"type": "text", "text": b.text}
	default:
		return map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": json.RawMessage(b.input)}
	}
}

// start is the block as content_block_start shows it: empty, to be filled
// by deltas.
func (b anthBlock) start() map[string]any {
	switch b.kind {
	case "thinking":
		return map[string]any{"type": "thinking", "thinking": "", "signature": ""}
	case "text":
		return map[string]any{"type": "text", "text": ""}
	default:
		return map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": map[string]any{}}
	}
}

// stream sends the block at index i: start, deltas in pieces, stop.
func (b anthBlock) stream(sse anthSSE, i int, pace *pacer) {
	sse.send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": b.start()})
	for _, d := range b.deltas() {
		if t := d["type"]; t == "text_delta" || t == "thinking_delta" {
			pace.next()
		}
		sse.send("content_block_delta", anthDelta(i, d))
	}
	sse.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
}

func (b anthBlock) deltas() []map[string]any {
	var out []map[string]any
	switch b.kind {
	case "thinking":
		for _, c := range anthChunks(b.text) {
			out = append(out, map[string]any{"type": "thinking_delta", "thinking": c})
		}
		out = append(out, map[string]any{"type": "signature_delta", "signature": b.signature})
	case "text":
		for _, c := range anthChunks(b.text) {
			out = append(out, map[string]any{"type": "text_delta", "text": c})
		}
	default:
		// The API opens tool input with an empty piece.
		out = append(out, map[string]any{"type": "input_json_delta", "partial_json": ""})
		for _, c := range anthChunks(b.input) {
			out = append(out, map[string]any{"type": "input_json_delta", "partial_json": c})
		}
	}
	return out
}

func anthDelta(i int, delta map[string]any) map[string]any {
	return map[string]any{"type": "content_block_delta", "index": i, "delta": delta}
}

// anthChunks splits s into pieces of at most 16 runes, at least two when
// s has two runes or more, so that clients must join deltas. It cuts
// between runes: a piece is a JSON string and must stay valid UTF-8.
func anthChunks(s string) []string {
	n := utf8.RuneCountInString(s)
	size := min(16, max(1, (n+1)/2))
	var out []string
	for s != "" {
		i, k := 0, 0
		for k < size && i < len(s) {
			_, w := utf8.DecodeRuneInString(s[i:])
			i, k = i+w, k+1
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if out == nil {
		out = []string{""}
	}
	return out
}

// anthRequest is the part of a Messages request body the fake reads.
type anthRequest struct {
	Model     string          `json:"model"`
	MaxTokens *int            `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    model.Role      `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Stream bool `json:"stream"`
}

// anthBlockIn is a request content block of any type.
type anthBlockIn struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  *string         `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// parseAnthropic reads a request body into the neutral form, rejecting
// what the API rejects with a message in the API's style. needMaxTokens
// is false for count_tokens, which takes no max_tokens.
func parseAnthropic(body []byte, needMaxTokens bool) (*Request, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, fmt.Errorf("invalid JSON body: %v", err)
	}
	for _, k := range []string{"temperature", "top_p", "top_k"} {
		if _, ok := fields[k]; ok {
			return nil, fmt.Errorf("%s: Extra inputs are not permitted", k)
		}
	}
	var in anthRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("invalid request body: %v", err)
	}
	if err := in.check(needMaxTokens); err != nil {
		return nil, err
	}
	return in.neutral()
}

func (in *anthRequest) check(needMaxTokens bool) error {
	switch {
	case in.Model == "":
		return errors.New("model: Field required")
	case needMaxTokens && in.MaxTokens == nil:
		return errors.New("max_tokens: Field required")
	case needMaxTokens && *in.MaxTokens < 1:
		return errors.New("max_tokens: Input should be greater than or equal to 1")
	case len(in.Messages) == 0:
		return errors.New("messages: at least one message is required")
	}
	return nil
}

// neutral converts the body to a Request, checking roles, blocks and the
// pairing of tool calls with their results.
func (in *anthRequest) neutral() (*Request, error) {
	sys, err := anthTextOf(in.System)
	if err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	r := &Request{Model: in.Model, System: sys, Stream: in.Stream}
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	for i, m := range in.Messages {
		emptyOK := i == len(in.Messages)-1 && m.Role == model.Assistant // a prefill
		msg, err := anthMessage(m.Role, m.Content, emptyOK)
		if err != nil {
			return nil, fmt.Errorf("messages.%d.%w", i, err)
		}
		r.Messages = append(r.Messages, msg)
	}
	if err := anthCheckPairs(r.Messages); err != nil {
		return nil, err
	}
	return r, nil
}

// anthSystemRole is the role of a system message inside the conversation,
// which API version 2026-10-21 accepts; its blocks are text only.
const anthSystemRole model.Role = "system"

// errAnthEmpty is the API's complaint about a message without content.
var errAnthEmpty = errors.New("content: all messages must have non-empty content except for the optional final assistant message")

// anthMessage converts one message; its errors start with the field path
// under the message. emptyOK allows empty content (a final assistant
// message).
func anthMessage(role model.Role, raw json.RawMessage, emptyOK bool) (model.Message, error) {
	if role != model.User && role != model.Assistant && role != anthSystemRole {
		return model.Message{}, fmt.Errorf("role: Input should be 'user', 'assistant' or 'system'")
	}
	if len(raw) == 0 || string(raw) == "null" {
		return model.Message{}, errors.New("content: Field required")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" && !emptyOK {
			return model.Message{}, errAnthEmpty
		}
		return model.Message{Role: role, Content: []model.Block{&model.Text{Text: s}}}, nil
	}
	var blocks []anthBlockIn
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return model.Message{}, errors.New("content: Input should be a valid string or list of content blocks")
	}
	if len(blocks) == 0 && !emptyOK {
		return model.Message{}, errAnthEmpty
	}
	msg := model.Message{Role: role}
	for i, b := range blocks {
		blk, err := b.neutral(role)
		if err != nil {
			return model.Message{}, fmt.Errorf("content.%d.%w", i, err)
		}
		if blk != nil {
			msg.Content = append(msg.Content, blk)
		}
	}
	return msg, nil
}

// anthSkipped are block types the API accepts that have no neutral form.
var anthSkipped = map[string]bool{"image": true, "document": true, "search_result": true}

// neutral converts one block; a skipped type gives nil.
func (b *anthBlockIn) neutral(role model.Role) (model.Block, error) {
	if only := anthRoleOf[b.Type]; only != "" && only != role {
		return nil, fmt.Errorf("type: %s blocks are only allowed in %s messages", b.Type, only)
	}
	if role == anthSystemRole && b.Type != "text" {
		return nil, fmt.Errorf("type: system messages take text blocks only, not %s", b.Type)
	}
	switch b.Type {
	case "text":
		if b.Text == "" {
			return nil, errors.New("text: text content blocks must be non-empty")
		}
		return &model.Text{Text: b.Text}, nil
	case "thinking":
		if b.Thinking == nil || b.Signature == "" {
			return nil, errors.New("signature: Field required")
		}
		return &model.Thinking{Thinking: *b.Thinking, Signature: b.Signature}, nil
	case "redacted_thinking":
		return &model.Thinking{Redacted: b.Data}, nil
	case "tool_use":
		return b.toolUse()
	case "tool_result":
		content, err := anthTextOf(b.Content)
		if err != nil {
			return nil, fmt.Errorf("content: %w", err)
		}
		return &model.ToolResult{ToolUseID: b.ToolUseID, Content: content, IsError: b.IsError}, nil
	}
	if anthSkipped[b.Type] {
		return nil, nil
	}
	return nil, fmt.Errorf("type: unsupported content block type %q", b.Type)
}

// anthRoleOf names the only role that may send a block type.
var anthRoleOf = map[string]model.Role{
	"thinking": model.Assistant, "redacted_thinking": model.Assistant,
	"tool_use": model.Assistant, "tool_result": model.User,
}

func (b *anthBlockIn) toolUse() (model.Block, error) {
	switch {
	case b.ID == "":
		return nil, errors.New("id: Field required")
	case b.Name == "":
		return nil, errors.New("name: Field required")
	case len(b.Input) == 0 || b.Input[0] != '{':
		return nil, errors.New("input: Input should be a valid dictionary")
	}
	return &model.ToolUse{ID: b.ID, Name: b.Name, Input: b.Input}, nil
}

// anthTextOf reads a field that is a string or a list of blocks, keeping
// the text blocks: system and tool_result content.
func anthTextOf(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []anthBlockIn
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", errors.New("Input should be a valid string or list of text blocks")
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n"), nil
}

// anthCheckPairs enforces the API's rule: the message after an assistant
// message with tool_use blocks answers every one of them with a
// tool_result, and a tool_result answers a tool_use of the message just
// before it. A trailing assistant message is left alone.
func anthCheckPairs(msgs []model.Message) error {
	for i, m := range msgs {
		var asked map[string]bool
		if i > 0 && msgs[i-1].Role == model.Assistant {
			asked = anthToolIDs(msgs[i-1])
		}
		for _, b := range m.Content {
			if r, ok := b.(*model.ToolResult); ok && !asked[r.ToolUseID] {
				return fmt.Errorf("messages.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. "+
					"Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, r.ToolUseID)
			}
		}
		if m.Role == model.Assistant && i+1 < len(msgs) {
			if err := anthCheckAnswered(i, m, msgs[i+1]); err != nil {
				return err
			}
		}
	}
	return nil
}

func anthCheckAnswered(i int, m, next model.Message) error {
	answered := map[string]bool{}
	for _, b := range next.Content {
		if r, ok := b.(*model.ToolResult); ok {
			answered[r.ToolUseID] = true
		}
	}
	for _, u := range m.ToolUses() {
		if !answered[u.ID] {
			return fmt.Errorf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. "+
				"Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i, u.ID)
		}
	}
	return nil
}

func anthToolIDs(m model.Message) map[string]bool {
	ids := map[string]bool{}
	for _, u := range m.ToolUses() {
		ids[u.ID] = true
	}
	return ids
}
