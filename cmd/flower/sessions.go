package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/term"
	"github.com/flower-run/flower/store"
)

func newSessions(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List this workspace's sessions: id, step, started, turns, cost, ok/failed/open, the task (reads only)",
		Long: `List the sessions of this workspace's agents, oldest first: the workflow's
steps and judges, flower once and the oracle. STATUS is ok or failed for a
step with its result, ok for a session whose model ended its turn, open for
one cut (a wake continues it). Any command that takes a session id (show,
once --resume) takes a unique prefix of it too. --json prints the rows as
one JSON array.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSessions(cmd.Context(), g, asJSON, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sessions as a JSON array (id, step, started, turns, cost_usd, status, task)")
	return cmd
}

func runSessions(ctx context.Context, g *globals, asJSON bool, out io.Writer) error {
	ws, s, err := readStore(g)
	if err != nil {
		return err
	}
	rows := []flower.SessionRow{}
	if s != nil {
		defer s.Close()
		if rows, err = flower.SessionRows(ctx, s, ws); err != nil {
			return &exitError{code: exitFailed, err: err}
		}
	}
	switch {
	case asJSON:
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	case len(rows) == 0:
		fmt.Fprintf(out, "no sessions in %s yet\n", tilde(ws))
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTEP\tSTARTED\tTURNS\tCOST\tSTATUS\tTASK")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t$%.4f\t%s\t%s\n", r.ID, dash(r.Step),
			r.Started.Local().Format(time.DateTime), r.Turns, r.Cost, r.Status, term.Clip(r.Task, 60))
	}
	return tw.Flush()
}

// resolveSession is flower.ResolveSession with the CLI's exit codes.
func resolveSession(ctx context.Context, s store.Store, ws, id string) (string, error) {
	id, err := flower.ResolveSession(ctx, s, ws, id)
	return id, fail(err)
}
