package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flower-run/flower/workflow"
)

func newPs(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "ps",
		Short: "List the in-flight run of this run dir and who drives it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			runs := workflow.Runs(g.runDir)
			if len(runs) == 0 {
				fmt.Fprintf(out, "no runs in %s\n", g.runDir)
				return nil
			}
			for _, r := range runs {
				driver := "nobody (a wake will finish it)"
				if r.Live {
					driver = fmt.Sprintf("pid %d on %s since %s", r.Owner.PID, r.Owner.Host, r.Owner.Since.Format("15:04:05"))
				} else if r.Status != workflow.StatusRunning {
					driver = "-"
				}
				fmt.Fprintf(out, "%s  %-9s  step %-8s  done %s  driven by %s\n", r.Run, r.Status, dash(r.Step),
					dash(strings.Join(r.Done, ",")), driver)
			}
			return nil
		},
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newDiscard(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "discard RUN",
		Short: "Abandon an in-flight run: the next wake starts a new one (sessions and rows stay)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o, live := workflow.Holder(g.runDir); live {
				return &exitError{code: exitFailed, err: fmt.Errorf("run %s is being driven by pid %d: stop it first", args[0], o.PID)}
			}
			if err := workflow.Discard(g.runDir, args[0]); err != nil {
				return usageErr("%v", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "discarded %s\n", args[0])
			return nil
		},
	}
}

// reset clears the in-flight run state after confirmation (R5.6). A store
// of another schema version is moved aside, so a new one can be created;
// nothing is deleted.
func reset(g *globals, yes bool, in io.Reader, out io.Writer) error {
	if o, live := workflow.Holder(g.runDir); live {
		return &exitError{code: exitFailed, err: fmt.Errorf("pid %d is driving %s: stop it before --reset", o.PID, g.runDir)}
	}
	if !yes {
		fmt.Fprintf(out, "This clears the in-flight run state in %s (sessions, lineage and manifest stay) and moves an incompatible sessions.db aside. Continue? [y/N] ", g.runDir)
		line, _ := bufio.NewReader(in).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return &exitError{code: exitFailed, err: fmt.Errorf("reset cancelled")}
		}
	}
	if err := workflow.Reset(g.runDir); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	moved, err := moveIncompatibleStore(g.runDir, time.Now())
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if moved != "" {
		fmt.Fprintf(out, "moved the incompatible store to %s\n", moved)
	}
	fmt.Fprintln(out, "in-flight state cleared")
	return nil
}

// moveIncompatibleStore renames a sessions.db the store refuses.
func moveIncompatibleStore(runDir string, now time.Time) (string, error) {
	path := filepath.Join(runDir, "sessions.db")
	if _, err := os.Stat(path); err != nil {
		return "", nil
	}
	if st, err := openStore(path); err == nil {
		st.Close()
		return "", nil
	}
	aside := path + "." + now.Format("20060102-150405") + ".old"
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(path+suffix, aside+suffix); err != nil && !os.IsNotExist(err) {
			return "", fmt.Errorf("move %s aside: %w", path+suffix, err)
		}
	}
	return aside, nil
}
