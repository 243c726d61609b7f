// Package web is the HTTP and Web front end of a run (R6.7, R6.8): a JSON
// API to read the event stream and steer the run, a WebSocket that pushes
// the stream live, and one embedded page that uses both.
//
// The API, JSON in and out:
//
//	GET  /events?after=N     {"events": [{seq, kind, text, tool, payload}], "gap": bool}
//	GET  /asks               [{id, question, options, waited_s}]
//	POST /answer  {id, text}     {"ok": bool}   false: that ask is no longer waiting
//	POST /decline {id, reason}   {"ok": bool}
//	POST /send    {text}         {"ok": true}   mail to the agent's inbox
//	POST /interrupt {text}       {"ok": true}   stop at the next message boundary
//	POST /oracle  {question}     {"answer": string}
//	POST /wake    {text}         {"ok": true}   after the run ended: the next wake (text: a phrase; empty: continue); 409 while a run goes on
//	GET  /ws?after=N         WebSocket: messages shaped like GET /events
//	GET  /?token=T           the page
//
// These routes serve the run of this process (Options.Events and
// Channel: flower serve, behind a Hub that outlives its wakes). With
// Options.Runs the runs of a database are served (runs.go: flower serve
// --runs), each steered under /runs/{id}/ by the same handlers (steer.go)
// through the store (Stored). A note or an interrupt for a run nothing
// drives any more (between wakes; a run no longer in flight) is 409, and
// an answer to it ok:false.
//
// Events are numbered from 1; the latest 2000 are kept in memory, and with
// a History every event but deltas is stored, numbered on across restarts
// of the server (issue 14): an after older than the memory window is
// answered from the store (at most 5000 stored events at a time: ask again
// with the last seq). gap is true when the client missed events that are
// kept nowhere (no store, or its after is from a server that died before
// storing its last events: the next one numbers on past them, with an
// error event saying so).
//
// Every request needs "Authorization: Bearer <token>", except the page
// (GET /), which holds no data of the run: it is opened with the token in
// its query, as printed at start, keeps it in the tab's sessionStorage and
// takes it out of the address bar, so a reload works (a wrong token in the
// query is still refused). The WebSocket takes the token as a subprotocol
// "bearer.<token>" next to "flower.v1" (a header, so the token never lands
// in a URL or a log). No other route accepts a token in the query. Errors are {"error": "one line"} with a 4xx or 5xx status: 401
// without the right token, 400 for a malformed body or ask id, 404 for an
// ask id never issued, 413 for a body over 64 KiB. An answer that is the
// number of one of the question's options picks that option.
package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/human"
)

// MaxBody is the largest request body accepted.
const MaxBody = 64 << 10

// Channel is what the API needs of the human channel.
type Channel interface {
	Pending() []human.Ask
	Answer(id, text string) bool
	Decline(id, reason string) bool
	Send(text string)
}

var _ Channel = (*human.Channel)(nil)

// Options configure a Server.
type Options struct {
	Token string // required; see Token
	// Events and Channel are the events and the human channel of the run
	// of this process (flower serve): the routes of one run, the
	// WebSocket and the page. Nil: only the Runs routes.
	Events  *event.Broker
	Channel Channel
	// History is the stream's stored events, for clients behind the
	// broker's window or from before a restart (issue 14). Nil: only the
	// broker's window.
	History History
	// Interrupt stops the run at the next message boundary and continues
	// it with text (agent.Runtime.Interrupt). Nil: POST /interrupt is 501.
	Interrupt func(text string)
	// Oracle answers a side question (oracle.Oracle.Ask). Nil: POST
	// /oracle is 501.
	Oracle func(ctx context.Context, question string) (string, error)
	// Now is the clock for waited_s; nil is time.Now.
	Now func() time.Time
	// Wake starts the next wake with text (empty: continue) once the run
	// has ended (flower serve stays up after it, issue 11); an error says
	// why not (ErrBusy: a run is going on). Nil: POST /wake is 501.
	Wake func(text string) error
	// Runs are the runs of a database (flower serve --runs): GET and POST
	// /runs, GET /runs/{id} and the steering routes under it (runs.go).
	Runs *Runs
	// Limits bound what clients may hold open (zero: the defaults).
	Limits Limits
	// Log receives the server's own errors; nil is standard error.
	Log io.Writer
}

// ErrBusy is Wake's error while a run is going on: POST /wake is then 409.
var ErrBusy = errors.New("a run is going on: interrupt it first, or wait for it to end")

// Server serves the API, the WebSocket and the page.
type Server struct {
	opts Options
	hash [sha256.Size]byte // of the token: compared in constant time
	mux  *http.ServeMux
	page []byte // the page, with its script and style inlined
	csp  string // the page's Content-Security-Policy

	conns sync.WaitGroup // WebSocket handlers: Serve waits for them
}

// New returns a server. It fails when an option it needs is missing or the
// token is unusable.
func New(opts Options) (*Server, error) {
	if err := checkToken(opts.Token); err != nil {
		return nil, err
	}
	if (opts.Events == nil) != (opts.Channel == nil) || (opts.Events == nil && opts.Runs == nil) {
		return nil, errors.New("web: Events and Channel (one run), or Runs (any run), are required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	s := &Server{opts: opts, hash: sha256.Sum256([]byte(opts.Token)), mux: http.NewServeMux()}
	s.page, s.csp = page()
	if opts.Events != nil {
		one := local{&s.opts}
		s.mux.HandleFunc("GET /{$}", s.servePage)
		s.steerRoutes("", func(*http.Request) (Run, error) { return one, nil })
		s.mux.HandleFunc("POST /oracle", s.oracle)
		s.mux.HandleFunc("GET /ws", s.websocket)
		s.mux.HandleFunc("POST /wake", s.wake)
	}
	if opts.Runs != nil {
		s.runsRoutes()
	}
	return s, nil
}

// ServeHTTP checks the token, then routes. The page checks its own.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.URL.Path != "/" && !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="flower"`)
		fail(w, http.StatusUnauthorized, "missing or wrong token: send Authorization: Bearer <the token flower printed at start>")
		return
	}
	if r.URL.Path != "/" {
		promoteRequest(r)
	}
	s.mux.ServeHTTP(w, r)
}

// authorized reports whether r carries the token in its Authorization
// header or, for the WebSocket only, as a "bearer.<token>" subprotocol.
func (s *Server) authorized(r *http.Request) bool {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, _ := strings.Cut(strings.TrimSpace(h), " ")
		return strings.EqualFold(scheme, "Bearer") && s.matches(strings.TrimSpace(tok))
	}
	if r.URL.Path == "/ws" {
		for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
			for _, p := range strings.Split(v, ",") {
				if tok, ok := strings.CutPrefix(strings.TrimSpace(p), subprotocolPrefix); ok && s.matches(tok) {
					return true
				}
			}
		}
	}
	return false
}

// matches compares tok with the token in constant time: both are hashed
// first, so not even the length leaks.
func (s *Server) matches(tok string) bool {
	h := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(h[:], s.hash[:]) == 1
}

// Token returns the token to use: FLOWER_TOKEN from getenv when set (it
// must be at least 16 characters of A-Z a-z 0-9 . _ ~ -, so it can travel
// in a URL and a WebSocket subprotocol unchanged), or 32 random bytes in
// hex.
func Token(getenv func(string) string) (string, error) {
	if t := getenv("FLOWER_TOKEN"); t != "" {
		if err := checkToken(t); err != nil {
			return "", fmt.Errorf("FLOWER_TOKEN: %w", err)
		}
		return t, nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

var tokenChars = regexp.MustCompile(`^[A-Za-z0-9._~-]{16,}$`)

func checkToken(t string) error {
	if !tokenChars.MatchString(t) {
		return errors.New("the token must be at least 16 characters of A-Z a-z 0-9 . _ ~ -")
	}
	return nil
}

// wireEvent is an event as the API sends it: every field present, payload
// an object, Raw never.
type wireEvent struct {
	Seq     int            `json:"seq"`
	Kind    event.Kind     `json:"kind"`
	Text    string         `json:"text"`
	Tool    string         `json:"tool"`
	Payload map[string]any `json:"payload"`
}

// batch is the answer of GET /events and each WebSocket message.
type batch struct {
	Events []wireEvent `json:"events"`
	Gap    bool        `json:"gap"`
}

func newBatch(ns []event.Numbered, gap bool) batch {
	b := batch{Events: make([]wireEvent, 0, len(ns)), Gap: gap}
	for _, n := range ns {
		p := n.Payload
		if p == nil {
			p = map[string]any{}
		}
		b.Events = append(b.Events, wireEvent{Seq: n.Seq, Kind: n.Kind, Text: n.Text, Tool: n.Tool, Payload: p})
	}
	return b
}

// encode marshals b. A payload that cannot be encoded (a consumer put
// something odd in it) is replaced by a note, so one event never breaks
// the stream.
func (b batch) encode() []byte {
	data, err := json.Marshal(b)
	if err == nil {
		return data
	}
	for i, e := range b.Events {
		if _, err := json.Marshal(e.Payload); err != nil {
			b.Events[i].Payload = map[string]any{"unencodable": err.Error()}
		}
	}
	data, _ = json.Marshal(b)
	return data
}

// afterParam reads ?after=N, the seq of the last event a client has (R6.7).
func afterParam(r *http.Request) (int, error) {
	v := r.URL.Query().Get("after")
	if v == "" {
		return 0, nil
	}
	var n int
	if _, err := fmt.Sscan(v, &n); err != nil || n < 0 || fmt.Sprint(n) != v {
		return 0, fmt.Errorf("after=%q: want the seq of the last event you have (a number >= 0)", v)
	}
	return n, nil
}

// wake starts the next wake once the run has ended.
func (s *Server) wake(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Text string `json:"text"`
	}
	if !decode(w, r, &in) {
		return
	}
	if s.opts.Wake == nil {
		fail(w, http.StatusNotImplemented, "this server cannot start another wake")
		return
	}
	switch err := s.opts.Wake(strings.TrimSpace(in.Text)); {
	case errors.Is(err, ErrBusy):
		fail(w, http.StatusConflict, err.Error())
	case err != nil:
		fail(w, http.StatusBadRequest, oneLine(err.Error()))
	default:
		reply(w, map[string]bool{"ok": true})
	}
}

func (s *Server) oracle(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Question string `json:"question"`
	}
	if !decode(w, r, &in) {
		return
	}
	if strings.TrimSpace(in.Question) == "" {
		fail(w, http.StatusBadRequest, "question is empty")
		return
	}
	if s.opts.Oracle == nil {
		fail(w, http.StatusNotImplemented, "this server has no oracle")
		return
	}
	a, err := s.opts.Oracle(r.Context(), in.Question)
	if err != nil {
		fail(w, http.StatusBadGateway, oneLine(err.Error()))
		return
	}
	reply(w, map[string]string{"answer": a})
}

// decode reads a JSON object of at most MaxBody bytes into v, strictly:
// unknown fields and trailing data are errors. It answers the request
// itself when it fails, with the API's one-line JSON error.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if r.ContentLength > MaxBody {
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body is %d bytes; the limit is %d", r.ContentLength, MaxBody))
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.Decode(&struct{}{}) != io.EOF {
		err = errors.New("more than one JSON value")
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over the limit of %d bytes", MaxBody))
		return false
	case errors.Is(err, io.EOF):
		fail(w, http.StatusBadRequest, "bad JSON: the body is empty")
		return false
	case err != nil:
		fail(w, http.StatusBadRequest, "bad JSON: "+oneLine(err.Error()))
		return false
	}
	return true
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func oneLine(s string) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) > 300 {
		return string(r[:299]) + "…"
	}
	return string(r)
}
