package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/flower-run/flower/event/eventlog"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/store"
)

// One run of flower serve --runs, steered from any serve attached to the
// database (issue 14, R12.4), in the JSON shapes of flower serve's own API
// (front/web):
//
//	GET  /runs/{id}/events?after=N  {"events": [{seq, kind, text, tool, payload}], "gap": false}
//	GET  /runs/{id}/asks            [{id, question, options, waited_s}]
//	POST /runs/{id}/answer  {id, text}    {"ok": bool}  false: that ask is no longer waiting
//	POST /runs/{id}/decline {id, reason}  {"ok": bool}
//	POST /runs/{id}/send    {text}        {"ok": true}  mail for the agent's inbox
//	POST /runs/{id}/interrupt {text}      {"ok": true}  stop at the next message boundary
//
// The events are the stored stream of the run's workspace (every driver
// on a database store keeps it), so a client that saw up to seq N asks
// any serve, restarted or not, for what followed. The asks are derived
// from the run's human journal, and what is posted is appended to it for
// the run's driver, which applies each record exactly once (package
// human, inbound.go) and is woken by a notification. ok:true means the
// answer is durable and on its way; whether it beat the ask's timeout the
// settled event says. An unknown run is 404; posting to a run that is not
// in flight is 409.

// askSlack is how far before its run's creation an ask may be dated and
// still be the run's: the clocks of the machine that submitted and the
// one that drives may differ.
const askSlack = time.Minute

// maxEvents bounds one answer of GET /runs/{id}/events: ask again with
// the last seq.
const maxEvents = 5000

var askIDForm = regexp.MustCompile(`^q[1-9][0-9]*$`)

func (a *runsAPI) steerRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /runs/{id}/events", a.events)
	mux.HandleFunc("GET /runs/{id}/asks", a.asks)
	mux.HandleFunc("POST /runs/{id}/answer", a.answer)
	mux.HandleFunc("POST /runs/{id}/decline", a.decline)
	mux.HandleFunc("POST /runs/{id}/send", a.send)
	mux.HandleFunc("POST /runs/{id}/interrupt", a.interrupt)
}

// run finds the run of the request, answering 404 or 500 itself when it
// cannot.
func (a *runsAPI) run(w http.ResponseWriter, r *http.Request) (store.Run, bool) {
	id := r.PathValue("id")
	run, ok, err := a.db.Run(r.Context(), id)
	switch {
	case err != nil:
		apiFail(w, http.StatusInternalServerError, oneLineErr(err))
		return store.Run{}, false
	case !ok:
		apiFail(w, http.StatusNotFound, fmt.Sprintf("no run %s (GET /runs lists them)", id))
		return store.Run{}, false
	}
	return run, true
}

// remote is the human channel of run, through the database.
func (a *runsAPI) remote(run store.Run) human.Remote {
	return human.Remote{Store: a.db, Key: store.SideLog(run.Workspace, store.HumanJournal), Since: run.Created.Add(-askSlack)}
}

// nudge tells the run's driver to read its journal now; a lost
// notification only costs it its poll.
func (a *runsAPI) nudge(ctx context.Context, run store.Run) {
	_ = a.db.Notify(ctx, inboundChannel, store.SideLog(run.Workspace, store.HumanJournal))
}

type wireEvent struct {
	Seq     int            `json:"seq"`
	Kind    string         `json:"kind"`
	Text    string         `json:"text"`
	Tool    string         `json:"tool"`
	Payload map[string]any `json:"payload"`
}

func (a *runsAPI) events(w http.ResponseWriter, r *http.Request) {
	after, err := web.AfterParam(r)
	if err != nil {
		apiFail(w, http.StatusBadRequest, err.Error())
		return
	}
	run, ok := a.run(w, r)
	if !ok {
		return
	}
	rd := eventlog.Reader{Log: a.db, Stream: store.SideLog(run.Workspace, store.EventLog)}
	ns, err := rd.After(r.Context(), after, maxEvents)
	if err != nil {
		apiFail(w, http.StatusInternalServerError, oneLineErr(err))
		return
	}
	out := make([]wireEvent, 0, len(ns))
	for _, n := range ns {
		p := n.Payload
		if p == nil {
			p = map[string]any{}
		}
		out = append(out, wireEvent{Seq: n.Seq, Kind: string(n.Kind), Text: n.Text, Tool: n.Tool, Payload: p})
	}
	apiReply(w, http.StatusOK, map[string]any{"events": out, "gap": false})
}

func (a *runsAPI) asks(w http.ResponseWriter, r *http.Request) {
	run, ok := a.run(w, r)
	if !ok {
		return
	}
	out := []web.AskJSON{}
	if run.Status == store.RunInFlight {
		pending, err := a.remote(run).Pending(r.Context())
		if err != nil {
			apiFail(w, http.StatusInternalServerError, oneLineErr(err))
			return
		}
		now := time.Now()
		for _, p := range pending {
			opts := append([]string{}, p.Options...)
			waited := math.Round(now.Sub(p.Asked).Seconds()*10) / 10
			out = append(out, web.AskJSON{ID: p.ID, Question: p.Question, Options: opts, WaitedS: max(waited, 0)})
		}
	}
	apiReply(w, http.StatusOK, out)
}

func (a *runsAPI) answer(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	if web.Decode(w, r, &in) {
		a.settle(w, r, in.ID, func(rm human.Remote) (bool, error) { return rm.Answer(r.Context(), in.ID, in.Text) })
	}
}

func (a *runsAPI) decline(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ID     string `json:"id"`
		Reason string `json:"reason"`
	}
	if web.Decode(w, r, &in) {
		a.settle(w, r, in.ID, func(rm human.Remote) (bool, error) { return rm.Decline(r.Context(), in.ID, in.Reason) })
	}
}

// settle answers or declines ask id of the request's run with do.
func (a *runsAPI) settle(w http.ResponseWriter, r *http.Request, id string, do func(human.Remote) (bool, error)) {
	if !askIDForm.MatchString(id) {
		apiFail(w, http.StatusBadRequest, fmt.Sprintf("unknown ask id %q: ids look like q1 (see GET /runs/ID/asks)", id))
		return
	}
	run, found := a.run(w, r)
	if !found {
		return
	}
	if run.Status != store.RunInFlight {
		apiReply(w, http.StatusOK, map[string]bool{"ok": false})
		return
	}
	ok, err := do(a.remote(run))
	switch {
	case errors.Is(err, human.ErrNoAsk):
		apiFail(w, http.StatusNotFound, fmt.Sprintf("no ask %q in run %s: nothing was asked with that id (see GET /runs/%s/asks)", id, run.ID, run.ID))
	case err != nil:
		apiFail(w, http.StatusInternalServerError, oneLineErr(err))
	default:
		if ok {
			a.nudge(r.Context(), run)
		}
		apiReply(w, http.StatusOK, map[string]bool{"ok": ok})
	}
}

func (a *runsAPI) send(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Text string `json:"text"`
	}
	if !web.Decode(w, r, &in) {
		return
	}
	if strings.TrimSpace(in.Text) == "" {
		apiFail(w, http.StatusBadRequest, "text is empty: write what the agent should read in its inbox")
		return
	}
	a.post(w, r, func(rm human.Remote) error { return rm.Send(r.Context(), in.Text) })
}

func (a *runsAPI) interrupt(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Text string `json:"text"`
	}
	if web.Decode(w, r, &in) {
		a.post(w, r, func(rm human.Remote) error { return rm.Interrupt(r.Context(), strings.TrimSpace(in.Text)) })
	}
}

// post appends a record for the request's run, which must be in flight.
func (a *runsAPI) post(w http.ResponseWriter, r *http.Request, do func(human.Remote) error) {
	run, ok := a.run(w, r)
	if !ok {
		return
	}
	if run.Status != store.RunInFlight {
		apiFail(w, http.StatusConflict, fmt.Sprintf("run %s is %s: nothing drives it any more", run.ID, run.Status))
		return
	}
	if err := do(a.remote(run)); err != nil {
		apiFail(w, http.StatusInternalServerError, oneLineErr(err))
		return
	}
	a.nudge(r.Context(), run)
	apiReply(w, http.StatusOK, map[string]bool{"ok": true})
}

func oneLineErr(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
