package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/store"
)

func newSessions(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "sessions",
		Short: "List this workspace's sessions: id, step, started, turns, cost, first line of the prompt (reads only)",
		Long: `List the sessions of this workspace's agents, oldest first: the workflow's
steps and judges, flower once and the oracle. Any command that takes a
session id (show, once --resume) takes a unique prefix of it too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSessions(cmd.Context(), g, cmd.OutOrStdout())
		},
	}
}

func runSessions(ctx context.Context, g *globals, out io.Writer) error {
	ws, s, err := readStore(g)
	if err != nil {
		return err
	}
	if s == nil {
		fmt.Fprintf(out, "no sessions in %s yet\n", tilde(ws))
		return nil
	}
	defer s.Close()
	metas, err := flower.Sessions(ctx, s, ws, "")
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if len(metas) == 0 {
		fmt.Fprintf(out, "no sessions in %s yet\n", tilde(ws))
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTEP\tSTARTED\tTURNS\tCOST\tPROMPT")
	for _, m := range metas {
		// Only what the line shows: a long session's tool results stay unread.
		st, err := store.ReadStats(ctx, s, m.Key)
		if err != nil {
			return &exitError{code: exitFailed, err: err}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t$%.4f\t%s\n", flower.SessionID(ws, m.Key), dash(m.Agent),
			m.Created.Local().Format(time.DateTime), st.Turns, st.Cost, clipLine(firstLineOf(st.Prompt), 60))
	}
	return tw.Flush()
}

func clipLine(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// resolveSession is flower.ResolveSession with the CLI's exit codes.
func resolveSession(ctx context.Context, s store.Store, ws, id string) (string, error) {
	id, err := flower.ResolveSession(ctx, s, ws, id)
	return id, fail(err)
}
