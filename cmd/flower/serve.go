package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/front/web"
)

// serveFlags are flower serve's own flags; it shares the rest with flower
// [TASK].
type serveFlags struct {
	addr        string
	allowRemote bool
	runs        bool // --runs: the runs API of a database store (runsapi.go)
}

// newServe is flower serve: the same wake as flower [TASK], with the HTTP
// API and the Web page as its front end instead of the terminal (R6.7,
// R6.8). runFlags is root's flag set for f, shared so both commands take
// the same run flags.
func newServe(g *globals, f *wakeFlags, runFlags *pflag.FlagSet) *cobra.Command {
	sf := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve [TASK]",
		Short: "Run like flower [TASK], steered from a Web page and an HTTP API",
		Long: `flower serve starts, or continues, the work in this directory exactly as
flower [TASK] does, but shows it on a Web page instead of the terminal: the
live events, the questions waiting for you (answer with a click), a box for
notes to the agent's inbox, the oracle and an interrupt button. It prints
the page's address, with a token that every request must carry:

  flower serve "write a markdown-to-html script"
  flower: open http://127.0.0.1:PORT/?token=...

The same token as "Authorization: Bearer <token>" opens the JSON API:
GET /events?after=N, GET /asks, POST /answer {id,text}, /decline {id,reason},
/send {text}, /interrupt {text}, /oracle {question}. FLOWER_TOKEN sets the
token; otherwise a new one is made each time. The server listens on
loopback only, unless --allow-remote. Ctrl-C works as in the terminal.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			token, err := web.Token(os.Getenv)
			if err != nil {
				return usageErr("%v", err)
			}
			addSecret(token) // scrubbed from what the agent's tools return
			// Listen before anything is touched: a refused or busy address
			// must not leave a phrase added to the brief, say.
			if err := web.CheckAddr(sf.addr, sf.allowRemote); err != nil {
				return usageErr("--addr: %v", err)
			}
			l, err := web.Listen(sf.addr, sf.allowRemote)
			if err != nil {
				return &exitError{code: exitFailed, err: fmt.Errorf("--addr %s: %w", sf.addr, err)}
			}
			defer l.Close() // when the wake ends before serving; Serve closes it otherwise
			if sf.runs {
				return serveRuns(cmd.Context(), g, l, token, cmd.OutOrStdout())
			}
			phrase := strings.TrimSpace(strings.Join(args, " "))
			out := cmd.OutOrStdout()
			ws, err := filepath.Abs(g.workspace)
			if err != nil {
				return usageErr("--workspace: %v", err)
			}
			events, err := newServeEvents(cmd.Context(), g, ws)
			if err != nil {
				return err
			}
			return wakeWith(cmd.Context(), g, f, phrase, out, served(out, l, token, events))
		},
	}
	fl := cmd.Flags()
	runFlags.VisitAll(func(flag *pflag.Flag) {
		if flag.Name != "reset" && flag.Name != "yes" { // flower --reset is the terminal's business
			fl.AddFlag(flag)
		}
	})
	fl.StringVar(&sf.addr, "addr", "127.0.0.1:0", "HOST:PORT to serve on (port 0: any free port)")
	fl.BoolVar(&sf.runs, "runs", false, "serve the runs of the --store database instead of a wake: GET /runs, POST /runs, GET /runs/ID")
	fl.BoolVar(&sf.allowRemote, "allow-remote", false, "allow an --addr other machines can reach (anyone with the token steers the run)")
	return cmd
}

// served is the HTTP and Web front end on l: the events go to a broker
// that the API and the WebSockets read; the server runs while the run does.
func served(out io.Writer, l net.Listener, token string, stream *serveEvents) frontEnd {
	events := stream.broker
	return frontEnd{sink: stream.publish, attach: func(ctx context.Context, run wakeRun) (func(), error) {
		history := stream.attach(run.store)
		srv, err := web.New(web.Options{Token: token, Events: events, Channel: run.ch,
			Interrupt: run.rt.Interrupt, Oracle: run.oracle.Ask, History: history})
		if err != nil {
			stream.end()
			return nil, &exitError{code: exitFailed, err: err}
		}
		stream.publish(event.Event{Kind: event.Step, Text: run.banner,
			Payload: map[string]any{"banner": true, "wake": run.wake, "workspace": run.ws}})
		fmt.Fprintf(out, "flower: open %s\n", web.URL(l, token))
		ctx, cancel := context.WithCancel(ctx)
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ctx, l) }()
		return func() {
			cancel()
			if err := <-served; err != nil {
				fmt.Fprintln(os.Stderr, "flower:", err)
			}
			stream.end()
			events.Close()
		}, nil
	}}
}
