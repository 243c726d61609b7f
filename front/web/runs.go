package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"time"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow"
)

// The runs of a database over HTTP (flower serve --runs, issue 14), for a
// team's dashboard or scripts, with the same token:
//
//	GET  /runs          {"runs": [{id, workspace, status, outcome, task, step, done, driver}]}
//	POST /runs          {"task", "workspace", "ask_timeout_s"?} -> 201 {"id"}: queued for the workers
//	GET  /runs/{id}     {"run": {...}, "results": [...]}
//	GET  /runs/{id}/events, /asks; POST /runs/{id}/answer, /decline, /send, /interrupt
//
// The last are the routes of one run (steer.go) for the run id, through
// the store (Stored). driver is the live lease on the run's workspace when
// its holder is the process the run names: {host, pid, since, heartbeat}.
// An unknown run is 404; a note or an interrupt for a run no longer in
// flight is 409 (an answer to it is ok:false).

// DB is the database behind the runs (store/postgres): runs, journals,
// event streams, leases, and a notification to wake a run's driver.
type DB interface {
	store.Store
	store.Events
	store.Leaser
	Notify(ctx context.Context, channel, payload string) error
}

// Runs are the runs of a database, as Options.Runs.
type Runs struct {
	DB DB
	// Submit queues a run of task in workspace ws, whose questions wait
	// askTimeout seconds (nil: as long as its worker says). An error
	// wrapped by Invalid is the request's fault (400).
	Submit func(ctx context.Context, ws, task string, askTimeout *float64) (store.Run, error)
}

// Find is the run id, steered through the store; ErrNoRun if there is
// none.
func (x *Runs) Find(ctx context.Context, id string) (Stored, error) {
	run, ok, err := x.DB.Run(ctx, id)
	switch {
	case err != nil:
		return Stored{}, err
	case !ok:
		return Stored{}, fmt.Errorf("%w: %s", ErrNoRun, id)
	}
	return Stored{DB: x.DB, Run: run}, nil
}

type invalid struct{ error }

func (e invalid) Unwrap() error { return e.error }

// Invalid marks err, of Submit, as the request's fault: 400.
func Invalid(err error) error { return invalid{err} }

func (s *Server) runsRoutes() {
	x := s.opts.Runs
	s.mux.HandleFunc("GET /runs", s.listRuns)
	s.mux.HandleFunc("POST /runs", s.submitRun)
	s.mux.HandleFunc("GET /runs/{id}", s.oneRun)
	s.steerRoutes("/runs/{id}", func(r *http.Request) (Run, error) { return x.Find(r.Context(), r.PathValue("id")) })
}

type holderJSON struct {
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Since     time.Time `json:"since"`
	Heartbeat time.Time `json:"heartbeat"`
}

type runJSON struct {
	store.Run
	Driver *holderJSON `json:"driver,omitempty"`
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	db := s.opts.Runs.DB
	runs, err := workflow.List(r.Context(), db, db.Holder, r.URL.Query().Get("workspace"), true)
	if err != nil {
		fail(w, http.StatusInternalServerError, oneLine(err.Error()))
		return
	}
	out := make([]runJSON, 0, len(runs))
	for _, x := range runs {
		rj := runJSON{Run: x.Run}
		if x.Live {
			rj.Driver = &holderJSON{Host: x.Owner.Host, PID: x.Owner.PID, Since: x.Owner.Since, Heartbeat: x.Owner.Heartbeat}
		}
		out = append(out, rj)
	}
	reply(w, map[string]any{"runs": out})
}

func (s *Server) oneRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.opts.Runs.Find(r.Context(), r.PathValue("id"))
	var results []store.StepResult
	if err == nil {
		results, err = s.opts.Runs.DB.Results(r.Context(), run.Run.ID)
	}
	if err != nil {
		s.failRun(w, r, err, "")
		return
	}
	reply(w, map[string]any{"run": run.Run, "results": results})
}

func (s *Server) submitRun(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Task       string   `json:"task"`
		Workspace  string   `json:"workspace"`
		AskTimeout *float64 `json:"ask_timeout_s"`
	}
	if !decode(w, r, &in) {
		return
	}
	if !filepath.IsAbs(in.Workspace) {
		fail(w, http.StatusBadRequest, fmt.Sprintf("workspace %q: want an absolute path, the same on every worker", in.Workspace))
		return
	}
	if in.AskTimeout != nil && (*in.AskTimeout < 0 || math.IsInf(*in.AskTimeout, 0)) {
		fail(w, http.StatusBadRequest, fmt.Sprintf("ask_timeout_s %v: want seconds >= 0 (0: unattended), or leave it out for the worker's", *in.AskTimeout))
		return
	}
	if s.opts.Runs.Submit == nil {
		fail(w, http.StatusNotImplemented, "this server cannot submit runs")
		return
	}
	run, err := s.opts.Runs.Submit(r.Context(), in.Workspace, in.Task, in.AskTimeout)
	var bad invalid
	switch {
	case errors.As(err, &bad):
		fail(w, http.StatusBadRequest, oneLine(err.Error()))
	case err != nil:
		fail(w, http.StatusInternalServerError, oneLine(err.Error()))
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]string{"id": run.ID})
	}
}
