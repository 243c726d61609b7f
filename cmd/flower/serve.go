package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/store"
)

// serveFlags are flower serve's own flags; it shares the rest with flower
// [TASK].
type serveFlags struct {
	addr        string
	allowRemote bool
	runs        bool // --runs: the runs API of a database store (runsapi.go)
	exitAfter   bool // --exit-after-run: end with the first wake (for scripts)
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
/send {text}, /interrupt {text}, /oracle {question}, /wake {text}. FLOWER_TOKEN
sets the token; otherwise a new one is made each time. The server listens on
loopback only, unless --allow-remote. Ctrl-C works as in the terminal.

When the run ends the server stays up: the page keeps the whole history
and the verdict, and starts the next wake (a phrase, or empty to continue)
until Ctrl-C, which exits as the last wake did. Unattended (--timeout 0) it
exits when the run ends.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			token, err := web.Token(os.Getenv)
			if err != nil {
				return usageErr("%v", err)
			}
			g.secrets = append(g.secrets, token) // scrubbed from what the agent's tools return
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
			return serveWakes(cmd.Context(), g, f, phrase, cmd.OutOrStdout(), l, token, sf.exitAfter)
		},
	}
	fl := cmd.Flags()
	runFlags.VisitAll(func(flag *pflag.Flag) {
		if flag.Name != "reset" && flag.Name != "yes" { // flower --reset is the terminal's business
			fl.AddFlag(flag)
		}
	})
	fl.StringVar(&sf.addr, "addr", "127.0.0.1:0", "HOST:PORT to serve on (port 0: any free port)")
	fl.BoolVar(&sf.runs, "runs", false, "serve the runs of the --store database instead of a wake: GET /runs, POST /runs, GET /runs/ID, and per run /events, /asks, /answer, /decline, /send, /interrupt")
	fl.BoolVar(&sf.exitAfter, "exit-after-run", false, "exit when the run ends instead of staying up for the next wake")
	fl.BoolVar(&sf.allowRemote, "allow-remote", false, "allow an --addr other machines can reach (anyone with the token steers the run)")
	return cmd
}

// serveWakes runs wakes behind one server, the hub of front/web: the
// first with phrase, the next ones as the page asks, until Ctrl-C (issue
// 11). Unattended (--timeout 0), after a usage error or a terminating
// signal it ends with the first wake, as flower [TASK] does. It exits as
// the last wake did.
func serveWakes(ctx context.Context, g *globals, f *wakeFlags, phrase string, out io.Writer, l net.Listener, token string, exitAfter bool) error {
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	open := func(ctx context.Context) (store.Store, error) { return openEvents(ctx, g) }
	h, stop, err := web.ServeHub(ctx, l, open, ws, web.Options{Token: token}, os.Stderr)
	if err != nil {
		return fail(err)
	}
	defer stop()
	var shown sync.Once // the address is printed once, after the first banner
	showURL := func() { shown.Do(func() { fmt.Fprintf(out, "flower: open %s\n", h.URL()) }) }
	fe := frontEnd{Front: h.Front(showURL)}
	// Ctrl-C, SIGTERM and SIGHUP are received for the whole of flower
	// serve, so that none arriving between wakes kills it unhandled; while
	// a wake runs, its own handler acts on them and these are dropped.
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	for {
		err := wakeWith(ctx, g, f, phrase, out, steered(g, fe, false))
		drain(sig)
		var ee *exitError
		if exitAfter || f.timeout == 0 || killedBy.Load() != nil || exitNow.Load() || (errors.As(err, &ee) && ee.code == exitUsage) {
			return err
		}
		why := ""
		if err != nil {
			why = err.Error()
			if ee != nil && ee.err != nil {
				why = ee.err.Error()
			}
		}
		h.Ended(err == nil, why)
		showURL()
		fmt.Fprintln(out, "flower: the run ended; the page stays up to start the next wake (Ctrl-C to exit)")
		select {
		case phrase = <-h.Next():
		case <-sig:
			return err
		case <-ctx.Done():
			return err
		}
		f.fresh, f.noRestore, f.runID = false, false, ""
	}
}

// drain drops the signals the wake's own handler already acted on.
func drain(sig <-chan os.Signal) {
	for {
		select {
		case <-sig:
		default:
			return
		}
	}
}

// openEvents opens the store that keeps the event log, reading only:
// nil when there is no store yet, or one older than the event log.
func openEvents(ctx context.Context, g *globals) (store.Store, error) {
	u, err := g.storeURL()
	if err != nil {
		return nil, err
	}
	s, err := flower.ReadStore(ctx, g.runDir, u)
	return s, fail(err)
}
