package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower/front/term"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/view"
)

func newShow(g *globals) *cobra.Command {
	var raw bool
	cmd := &cobra.Command{
		Use:   "show SESSION",
		Short: "Print a session's transcript as the model sees it (--raw: every stored entry)",
		Args:  needs("SESSION id", "flower sessions lists them (a unique prefix of an id will do, e.g. flower show 3f2a)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShow(cmd.Context(), g, args[0], raw, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&raw, "raw", false, "print every stored entry as a JSON line, bookkeeping included")
	return cmd
}

func runShow(ctx context.Context, g *globals, id string, raw bool, out io.Writer) error {
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	path := filepath.Join(g.runDir, "sessions.db")
	if u, err := g.storeURL(); err != nil {
		return err
	} else if u != "" {
		path = redactURL(u)
	} else if _, err := os.Stat(path); err != nil {
		return usageErr("no store at %s: run flower in this directory first, or pass -r RUN_DIR", path)
	}
	st, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if id, err = resolveSession(ctx, st, ws, id); err != nil {
		return err
	}
	entries, err := st.Load(ctx, store.SessionKey(ws, id))
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if len(entries) == 0 {
		return usageErr("no session %s for workspace %s in %s", id, ws, path)
	}
	if raw {
		enc := plainEncoder(out)
		for _, e := range entries {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	}
	printMessages(out, view.Build(entries))
	return nil
}

func printMessages(w io.Writer, msgs []model.Message) {
	for _, m := range msgs {
		fmt.Fprintf(w, "── %s\n", m.Role)
		for _, b := range m.Content {
			switch v := b.(type) {
			case *model.Text:
				fmt.Fprintln(w, term.Clean(v.Text))
			case *model.Thinking:
				fmt.Fprintln(w, "(thinking) "+term.Clean(v.Thinking))
			case *model.ToolUse:
				fmt.Fprintf(w, "[%s] %s\n", term.Clean(v.Name), term.Clean(plainJSON(v.Input)))
			case *model.ToolResult:
				mark := "↳"
				if v.IsError {
					mark = "↳ error:"
				}
				fmt.Fprintln(w, mark, term.Clean(v.Content))
			}
		}
	}
}

// openStore opens an existing session store.
func openStore(path string) (*sqlite.DB, error) { return sqlite.Open(path) }
