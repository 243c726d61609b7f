package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/human"
)

// Run is one run as the steering API (R6.7) sees it. Two implement it:
// the run of this process (its human channel, runtime and event broker:
// flower serve) and any run of a database, through the store (Stored:
// flower serve --runs). The same handlers serve both, so the routes of
// one run (/answer...) and of any run (/runs/{id}/answer...) answer alike.
type Run interface {
	// Asks are the questions waiting for an answer, oldest first.
	Asks(ctx context.Context) ([]human.Ask, error)
	// Answer settles ask id with text; a number picks that option. ok is
	// false when it no longer waits; an id never asked is human.ErrNoAsk.
	Answer(ctx context.Context, id, text string) (ok bool, err error)
	// Decline settles ask id with no answer but reason.
	Decline(ctx context.Context, id, reason string) (ok bool, err error)
	// Send puts text in the agent's inbox. ErrEnded: nothing drives the
	// run any more.
	Send(ctx context.Context, text string) error
	// Interrupt stops the run at its next message boundary and goes on
	// with text (empty: stops). ErrEnded as for Send; ErrCannot when this
	// server has no way to.
	Interrupt(ctx context.Context, text string) error
	// Events are at most maxHistory events after seq after, in order; gap
	// is true when the client missed events kept nowhere.
	Events(ctx context.Context, after int) (evs []event.Numbered, gap bool, err error)
}

var (
	// ErrEnded is a note or an interrupt for a run nothing drives any
	// more: 409.
	ErrEnded = errors.New("nothing drives the run any more")
	// ErrCannot is what this server cannot do for the run: 501.
	ErrCannot = errors.New("this server cannot do that")
	// ErrNoRun is an id no run has: 404.
	ErrNoRun = errors.New("no such run")
)

// steerRoutes registers the steering handlers under prefix ("" or
// "/runs/{id}"), with find giving the request's run.
func (s *Server) steerRoutes(prefix string, find func(*http.Request) (Run, error)) {
	route := func(pattern string, h func(http.ResponseWriter, *http.Request, Run)) {
		method, path, _ := strings.Cut(pattern, " ")
		s.mux.HandleFunc(method+" "+prefix+path, func(w http.ResponseWriter, r *http.Request) {
			run, err := find(r)
			if err != nil {
				s.failRun(w, r, err, "")
				return
			}
			h(w, r, run)
		})
	}
	route("GET /events", s.events)
	route("GET /asks", s.asks)
	route("POST /answer", s.answer)
	route("POST /decline", s.decline)
	route("POST /send", s.send)
	route("POST /interrupt", s.interrupt)
}

// base is the path the request's run is steered under: "" for the run
// of this process, /runs/ID for another.
func base(r *http.Request) string {
	if id := r.PathValue("id"); id != "" {
		return "/runs/" + id
	}
	return ""
}

// failRun answers err of the request's run (ask: the ask id concerned).
func (s *Server) failRun(w http.ResponseWriter, r *http.Request, err error, ask string) {
	switch {
	case errors.Is(err, ErrNoRun):
		fail(w, http.StatusNotFound, fmt.Sprintf("no run %s (GET /runs lists them)", r.PathValue("id")))
	case errors.Is(err, human.ErrNoAsk):
		fail(w, http.StatusNotFound, fmt.Sprintf("no ask %q: nothing was asked with that id (see GET %s/asks)", ask, base(r)))
	case errors.Is(err, ErrEnded):
		fail(w, http.StatusConflict, oneLine(err.Error()))
	case errors.Is(err, ErrCannot):
		fail(w, http.StatusNotImplemented, oneLine(err.Error()))
	default:
		fail(w, http.StatusInternalServerError, oneLine(err.Error()))
	}
}

func (s *Server) events(w http.ResponseWriter, r *http.Request, run Run) {
	after, err := afterParam(r)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	ns, gap, err := run.Events(r.Context(), after)
	if err != nil {
		s.failRun(w, r, err, "")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(newBatch(ns, gap).encode())
}

// AskJSON is a pending ask as GET /asks serves it (R6.7).
type AskJSON struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Options  []string `json:"options"`
	WaitedS  float64  `json:"waited_s"`
}

func (s *Server) asks(w http.ResponseWriter, r *http.Request, run Run) {
	pending, err := run.Asks(r.Context())
	if err != nil {
		s.failRun(w, r, err, "")
		return
	}
	now := s.opts.Now()
	out := []AskJSON{}
	for _, a := range pending {
		opts := append([]string{}, a.Options...)
		waited := math.Round(now.Sub(a.Asked).Seconds()*10) / 10
		out = append(out, AskJSON{ID: a.ID, Question: a.Question, Options: opts, WaitedS: max(waited, 0)})
	}
	reply(w, out)
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, run Run) {
	var in struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	if decode(w, r, &in) && s.checkAskID(w, r, in.ID) {
		ok, err := run.Answer(r.Context(), in.ID, in.Text)
		s.settled(w, r, in.ID, ok, err)
	}
}

func (s *Server) decline(w http.ResponseWriter, r *http.Request, run Run) {
	var in struct {
		ID     string `json:"id"`
		Reason string `json:"reason"`
	}
	if decode(w, r, &in) && s.checkAskID(w, r, in.ID) {
		ok, err := run.Decline(r.Context(), in.ID, in.Reason)
		s.settled(w, r, in.ID, ok, err)
	}
}

func (s *Server) settled(w http.ResponseWriter, r *http.Request, id string, ok bool, err error) {
	if err != nil {
		s.failRun(w, r, err, id)
		return
	}
	reply(w, map[string]bool{"ok": ok})
}

// askID is the form of the ids the human channel gives: q1, q2...
var askID = regexp.MustCompile(`^q[1-9][0-9]*$`)

// checkAskID answers 400 for an id of the wrong form.
func (s *Server) checkAskID(w http.ResponseWriter, r *http.Request, id string) bool {
	if !askID.MatchString(id) {
		fail(w, http.StatusBadRequest, fmt.Sprintf("unknown ask id %q: ids look like q1 (see GET %s/asks)", id, base(r)))
		return false
	}
	return true
}

func (s *Server) send(w http.ResponseWriter, r *http.Request, run Run) {
	var in struct {
		Text string `json:"text"`
	}
	if !decode(w, r, &in) {
		return
	}
	if strings.TrimSpace(in.Text) == "" {
		fail(w, http.StatusBadRequest, "text is empty: write what the agent should read in its inbox")
		return
	}
	s.done(w, r, run.Send(r.Context(), in.Text))
}

func (s *Server) interrupt(w http.ResponseWriter, r *http.Request, run Run) {
	var in struct {
		Text string `json:"text"`
	}
	if decode(w, r, &in) {
		s.done(w, r, run.Interrupt(r.Context(), strings.TrimSpace(in.Text)))
	}
}

func (s *Server) done(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		s.failRun(w, r, err, "")
		return
	}
	reply(w, map[string]bool{"ok": true})
}
