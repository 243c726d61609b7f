package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower/front/term"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/view"
)

func newShow(g *globals) *cobra.Command {
	var raw bool
	cmd := &cobra.Command{
		Use:   "show SESSION",
		Short: "Print a session's transcript as the model sees it (--raw: every stored entry)",
		Long: `Print a session's transcript as the model sees it now: each message under
its role, tool calls as [Tool] input, results under an arrow. A line starting
with · marks what that view leaves out, where it happened: an older denied
call, a failed model call, a call cut before it finished. --raw prints every
stored entry as one JSON line, bookkeeping included.`,
		Args: needs("SESSION id", "flower sessions lists them (a unique prefix of an id will do, e.g. flower show 3f2a)"),
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
	msgs, left := view.BuildLeft(entries, view.Default)
	term.Transcript(out, msgs, left...)
	return nil
}

// openStore opens an existing session store.
func openStore(path string) (*sqlite.DB, error) { return sqlite.Open(path) }

// plainEncoder is a JSON encoder that writes <, > and & as themselves:
// flower's JSON is read by people and scripts, never embedded in HTML.
func plainEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}
