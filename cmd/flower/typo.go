package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flower-run/flower"
)

// notACommand refuses a one-word task that looks like a mistyped command:
// "flower stauts" must not run four steps and pay for them (issue 11). A
// real one-word task is rare; the message says how to give one anyway.
func notACommand(root *cobra.Command, phrase string) error {
	word := strings.ToLower(phrase)
	if word == "" || strings.ContainsAny(word, " \t\n") {
		return nil
	}
	names := []string{"help"}
	for _, c := range root.Commands() {
		names = append(names, c.Name())
	}
	for _, name := range names {
		if word == name || (len(word) > 3 && distance(word, name) <= 2) {
			return usageErr("%q looks like a command, not a task (%s); to give flower a one-word task, say it in a sentence",
				phrase, suggestion(name))
		}
	}
	return nil
}

func suggestion(name string) string {
	if name == "help" {
		return "try flower --help"
	}
	return "did you mean flower " + name + "?"
}

// distance is the Levenshtein distance of two short words.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// version is the version flower was built from (flower.Version).
var version = flower.Version

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print flower's version (as flower --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "flower version "+version())
			return err
		},
	}
}

// needs is Args for a command taking exactly one argument: a missing or
// extra one gets a line naming what it needs and where to find it, not
// cobra's "accepts 1 arg(s), received 0" (issue 23).
func needs(what, hint string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 {
			return nil
		}
		return usageErr("%s needs one %s (got %d): %s", cmd.CommandPath(), what, len(args), hint)
	}
}

// flagTypo turns cobra's "unknown flag: --modle" into a line with the
// closest flag the command has (issue 23).
func flagTypo(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return usageErr("%v (%s --help lists the flags)", err, cmd.CommandPath())
	}
	best, bestD := "", 3
	visit := func(f *pflag.Flag) {
		if d := distance(name, f.Name); d < bestD {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	if best == "" {
		return usageErr("unknown flag --%s (%s --help lists the flags)", name, cmd.CommandPath())
	}
	return usageErr("unknown flag --%s: did you mean --%s? (%s --help lists the flags)", name, best, cmd.CommandPath())
}
