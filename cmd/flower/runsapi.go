package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
)

// flower serve --runs: the runs of a database store over HTTP (issue 14),
// for a team's dashboard or scripts, with the token of flower serve:
//
//	GET  /runs          {"runs": [{id, workspace, status, outcome, task, step, done, holder}]}
//	POST /runs          {"task", "workspace", "ask_timeout_s"?} -> 201 {"id"}: queued for the workers (flower submit)
//	GET  /runs/{id}     {"run": {...}, "results": [...]}
//	/runs/{id}/events, /asks, /answer, /decline, /send, /interrupt: runsteer.go
//
// holder is the live lease on the run's workspace when its driver is the
// one the run names: {host, pid, since, heartbeat}.

type runsAPI struct {
	db   *postgres.DB
	hash [sha256.Size]byte
}

// serveRuns serves the runs API on l until ctx ends.
func serveRuns(ctx context.Context, g *globals, l net.Listener, token string, out io.Writer) error {
	u, err := g.storeURL()
	if err != nil {
		return err
	}
	if u == "" {
		return usageErr("--runs serves the runs of a database: pass --store postgres://... or set %s", storeEnv)
	}
	db, err := postgres.Open(ctx, u)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	defer db.Close()
	a := &runsAPI{db: db, hash: sha256.Sum256([]byte(token))}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /runs", a.list)
	mux.HandleFunc("POST /runs", a.submit)
	mux.HandleFunc("GET /runs/{id}", a.one)
	a.steerRoutes(mux) // per-run events, asks, answers, notes and interrupts (runsteer.go)
	srv := &http.Server{Handler: a.guard(mux), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := interruptOrTerm(ctx)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	fmt.Fprintf(out, "flower: serving the runs of %s on http://%s/runs (Authorization: Bearer <token>)\n", db, l.Addr())
	if os.Getenv("FLOWER_TOKEN") == "" {
		fmt.Fprintf(out, "flower: token %s\n", token)
	}
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return &exitError{code: exitFailed, err: err}
	}
	return nil
}

// guard refuses a request without the token, as flower serve's API does.
func (a *runsAPI) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		scheme, tok, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(sum[:], a.hash[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="flower"`)
			apiFail(w, http.StatusUnauthorized, "missing or wrong token: send Authorization: Bearer <the token flower printed at start>")
			return
		}
		h.ServeHTTP(w, r)
	})
}

type apiHolder struct {
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Since     time.Time `json:"since"`
	Heartbeat time.Time `json:"heartbeat"`
}

type apiRun struct {
	store.Run
	Driver *apiHolder `json:"driver,omitempty"`
}

func (a *runsAPI) list(w http.ResponseWriter, r *http.Request) {
	runs, err := listRuns(r.Context(), &globals{}, a.db, r.URL.Query().Get("workspace"), true)
	if err != nil {
		apiFail(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := make([]apiRun, 0, len(runs))
	for _, x := range runs {
		ar := apiRun{Run: x.Run}
		if x.Live {
			ar.Driver = &apiHolder{Host: x.Owner.Host, PID: x.Owner.PID, Since: x.Owner.Since, Heartbeat: x.Owner.Heartbeat}
		}
		out = append(out, ar)
	}
	apiReply(w, http.StatusOK, map[string]any{"runs": out})
}

func (a *runsAPI) one(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	run, ok, err := a.db.Run(r.Context(), id)
	if err == nil && !ok {
		apiFail(w, http.StatusNotFound, fmt.Sprintf("no run %s (GET /runs lists them)", id))
		return
	}
	var results []store.StepResult
	if err == nil {
		results, err = a.db.Results(r.Context(), id)
	}
	if err != nil {
		apiFail(w, http.StatusInternalServerError, err.Error())
		return
	}
	apiReply(w, http.StatusOK, map[string]any{"run": run, "results": results})
}

func (a *runsAPI) submit(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Task       string   `json:"task"`
		Workspace  string   `json:"workspace"`
		AskTimeout *float64 `json:"ask_timeout_s"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		apiFail(w, http.StatusBadRequest, `body: want {"task": "...", "workspace": "/absolute/path"}: `+err.Error())
		return
	}
	if !filepath.IsAbs(req.Workspace) {
		apiFail(w, http.StatusBadRequest, fmt.Sprintf("workspace %q: want an absolute path, the same on every worker", req.Workspace))
		return
	}
	if req.AskTimeout != nil && (*req.AskTimeout < 0 || math.IsInf(*req.AskTimeout, 0)) {
		apiFail(w, http.StatusBadRequest, fmt.Sprintf("ask_timeout_s %v: want seconds >= 0 (0: unattended), or leave it out for the worker's", *req.AskTimeout))
		return
	}
	run, err := submitRun(r.Context(), a.db, req.Workspace, req.Task, req.AskTimeout)
	var ee *exitError
	switch {
	case errors.As(err, &ee) && ee.code == exitUsage:
		apiFail(w, http.StatusBadRequest, err.Error())
	case err != nil:
		apiFail(w, http.StatusInternalServerError, err.Error())
	default:
		apiReply(w, http.StatusCreated, map[string]string{"id": run.ID})
	}
}

func apiReply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func apiFail(w http.ResponseWriter, status int, msg string) {
	apiReply(w, status, map[string]string{"error": msg})
}

// interruptOrTerm ends ctx on Ctrl-C, SIGTERM or SIGHUP.
func interruptOrTerm(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}
