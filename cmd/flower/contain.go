package main

import (
	"math"
	"time"

	"github.com/spf13/pflag"

	"github.com/flower-run/flower/model"
)

// What keeps the agent away from flower and the person's secrets (issue
// 10), wired for the CLI.

// containFlags are the flags of issue 10 every command shares.
func containFlags(pf *pflag.FlagSet, g *globals) {
	pf.DurationVar(&g.idle, "idle-timeout", 0, "cut and retry a model stream silent this long (default model.idle_timeout in flower.yaml, else "+model.DefaultIdleTimeout.String()+")")
}

// checkIdle refuses an --idle-timeout too short to mean anything.
func checkIdle(g *globals) error {
	if g.idle != 0 && g.idle < time.Second {
		return usageErr("--idle-timeout %s: give at least 1s (e.g. 2m), or leave it out for the default", g.idle)
	}
	return nil
}

// checkAsks range-checks --timeout and --max-asks: a NaN, or a negative
// other than the -1 each documents, would silently mean something else.
func checkAsks(timeout float64, maxAsks int) error {
	if math.IsNaN(timeout) || math.IsInf(timeout, 0) || (timeout < 0 && timeout != -1) {
		return usageErr("--timeout %v: give seconds >= 0 (0: unattended), or -1 to wait forever", timeout)
	}
	if maxAsks < -1 {
		return usageErr("--max-asks %d: give 0 or more questions, or -1 for no limit", maxAsks)
	}
	return nil
}
