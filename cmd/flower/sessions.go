package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

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
	metas, err := topSessions(ctx, s, ws, "")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t$%.4f\t%s\n", sessionID(ws, m.Key), dash(m.Agent),
			m.Created.Local().Format(time.DateTime), st.Turns, st.Cost, clipLine(firstLineOf(st.Prompt), 60))
	}
	return tw.Flush()
}

// topSessions are the workspace's top-level sessions (no subagents) whose
// id starts with prefix, oldest first.
func topSessions(ctx context.Context, s store.Store, ws, prefix string) ([]store.Meta, error) {
	all, err := s.Sessions(ctx, store.ProjectKey(ws)+"/"+prefix)
	if err != nil {
		return nil, err
	}
	var out []store.Meta
	for _, m := range all {
		if !strings.Contains(sessionID(ws, m.Key), "/") {
			out = append(out, m)
		}
	}
	return out, nil
}

func sessionID(ws, key string) string {
	return strings.TrimPrefix(key, store.ProjectKey(ws)+"/")
}

func clipLine(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// resolveSession turns a session id or a unique prefix of one into the
// id. An unknown id is returned as it is, for the caller's own message;
// an ambiguous prefix is a usage error listing the candidates.
func resolveSession(ctx context.Context, s store.Store, ws, id string) (string, error) {
	if _, ok, err := s.Meta(ctx, store.SessionKey(ws, id)); err != nil || ok {
		return id, err
	}
	metas, err := topSessions(ctx, s, ws, id)
	if err != nil {
		return "", &exitError{code: exitFailed, err: err}
	}
	switch len(metas) {
	case 0:
		return id, nil
	case 1:
		return sessionID(ws, metas[0].Key), nil
	}
	ids := make([]string, len(metas))
	for i, m := range metas {
		ids[i] = sessionID(ws, m.Key)
	}
	return "", usageErr("session prefix %q is ambiguous: %s (give more of the id)", id, strings.Join(ids, ", "))
}
