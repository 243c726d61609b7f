// Package modeltest runs fake Anthropic Messages and OpenAI Chat Completions
// servers on loopback that speak the real JSON and SSE wire formats, so that
// the official SDK clients can be driven against them. A Responder scripts
// the answers turn by turn; every request is recorded; faults (HTTP errors,
// cut streams, error events, delays) are injected per turn.
//
// It serves flower's own tests and anyone testing a workflow offline; the
// "demo" model is one of these servers playing a scripted session.
package modeltest

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flower-run/flower/model"
)

// ToolCall is a scripted tool call. Input is JSON text; empty means {}.
type ToolCall struct {
	ID    string // generated when empty
	Name  string
	Input string
}

// Turn is one scripted model answer.
type Turn struct {
	Thinking  string
	Text      string
	ToolCalls []ToolCall
	// Stop overrides the stop reason (model.StopEnd or model.StopToolUse by default).
	Stop string
	// Usage overrides the usage (a figure derived from the request size by default).
	Usage *model.Usage
	// Fault, when set, replaces or disturbs the answer.
	Fault *Fault
	// Pace, when set, is called before each text or thinking delta of a
	// streamed answer with the request's context and the delta's number,
	// from 0. It may block to hold the stream there (a test then sees on
	// the client the text sent so far) or wait to play at a person's pace;
	// it should return when ctx ends.
	Pace func(ctx context.Context, n int)
}

// pacer counts the deltas of one answer for Turn.Pace.
type pacer struct {
	ctx  context.Context
	pace func(ctx context.Context, n int)
	n    int
}

// next is called before each text or thinking delta.
func (p *pacer) next() {
	if p == nil || p.pace == nil {
		return
	}
	p.pace(p.ctx, p.n)
	p.n++
}

// Fault injects a failure into one answer.
type Fault struct {
	// Status answers with this HTTP status and the provider's error body
	// (429, 500, 529, 401...). Type and Message override the defaults.
	Status     int
	Type       string
	Message    string
	RetryAfter string // the retry-after header, in seconds
	// CutAfterStart sends the first stream frame, then drops the connection.
	CutAfterStart bool
	// StreamError sends the start of the stream, then an error frame.
	StreamError bool
	// Delay waits this long (or until the request is cancelled) before answering.
	Delay time.Duration
	// Stall accepts the request and never answers: no status, no byte,
	// until the client gives up (a hung peer; issue 10).
	Stall bool
	// StallAfterStart sends the first stream frame, then nothing more
	// until the client gives up (a stream that stops mid-answer).
	StallAfterStart bool
}

// Request is one request the server received, with its messages parsed into
// the neutral model form.
type Request struct {
	N        int // 1-based arrival order
	Path     string
	Header   http.Header
	Body     []byte
	Model    string
	System   string
	Messages []model.Message
	Tools    []string
	Stream   bool
}

// Responder decides the answer to a request.
type Responder func(r *Request) Turn

// Script answers requests with turns in order. Past the end it answers with
// a 500 error naming the exhausted script, so a test that sends one request
// too many fails loudly.
func Script(turns ...Turn) Responder {
	var mu sync.Mutex // guards next
	next := 0
	return func(*Request) Turn {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(turns) {
			return Turn{Fault: &Fault{Status: 500, Message: "modeltest: script exhausted"}}
		}
		next++
		return turns[next-1]
	}
}

// Server is a fake model API on loopback.
type Server struct {
	URL string // base URL: pass to the SDK as is for Anthropic, with "/v1" for OpenAI (see BaseURL)

	srv       *httptest.Server
	respond   Responder
	mu        sync.Mutex // guards reqs and onRequest
	reqs      []*Request
	count     int  // requests received
	forget    bool // Forget: count requests, keep none
	onRequest func(r *Request)
	conns     atomic.Int64 // connections opened (Conns)
}

// Forget makes the server count the requests it receives but keep none
// (Requests returns only those before): a server that lives long, as a
// benchmark's, would otherwise hold every body, megabytes per session.
func (s *Server) Forget() {
	s.mu.Lock()
	s.forget = true
	s.mu.Unlock()
}

// OnRequest sets a hook called with each request before it is answered
// (crash tests kill a child process here). It may be set while requests
// are being served.
func (s *Server) OnRequest(f func(r *Request)) {
	s.mu.Lock()
	s.onRequest = f
	s.mu.Unlock()
}

func newServer(respond Responder, h func(s *Server) http.Handler) *Server {
	s := &Server{respond: respond}
	s.srv = httptest.NewUnstartedServer(h(s))
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.srv.Start()
	s.URL = s.srv.URL
	return s
}

// Conns is the number of connections clients have opened so far: a client
// that keeps its connections alive opens one per request in flight at once.
func (s *Server) Conns() int { return int(s.conns.Load()) }

// Close shuts the server down and waits for in-flight requests.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Requests returns the requests received so far.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// Count is the number of requests received so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// record numbers and stores r, runs the hook and asks the responder.
func (s *Server) record(r *Request) Turn {
	s.mu.Lock()
	s.count++
	r.N = s.count
	if !s.forget {
		s.reqs = append(s.reqs, r)
	}
	hook := s.onRequest
	s.mu.Unlock()
	if hook != nil {
		hook(r)
	}
	return s.respond(r)
}

// estimateTokens is a rough token count of a request body, used for the
// default usage so context size grows as a real conversation's does.
func estimateTokens(body []byte) int { return len(body)/4 + 1 }

func inputOrEmpty(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(s)
}
