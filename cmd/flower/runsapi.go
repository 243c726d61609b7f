package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/worker"
)

// serveRuns is flower serve --runs: the runs of a database store over
// HTTP (front/web, runs.go), until Ctrl-C, SIGTERM or SIGHUP.
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
	srv, err := web.New(web.Options{Token: token, Runs: &web.Runs{DB: db, Submit: worker.Submitter(db)}})
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	fmt.Fprintf(out, "flower: serving the runs of %s on http://%s/runs (Authorization: Bearer <token>)\n", db, l.Addr())
	if os.Getenv("FLOWER_TOKEN") == "" {
		fmt.Fprintf(out, "flower: token %s\n", token)
	}
	if err := srv.Serve(ctx, l); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	return nil
}
