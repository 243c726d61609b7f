// Command flower runs long-horizon LLM agents that survive crashes, dropped
// networks and full context windows. This file only maps errors to exit
// codes; each subcommand lives in its own file.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/flower-run/flower"
)

// Exit codes (SPEC §7).
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitOffline     = 75 // EX_TEMPFAIL: the endpoint stayed unreachable; try again later
	exitInterrupted = 130
)

// exitError carries an exit code with a one-line message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func main() {
	code := run(context.Background(), os.Args[1:])
	if s, ok := killedBy.Load().(syscall.Signal); ok {
		dieOf(s) // everything is closed; now die of the signal
	}
	os.Exit(code)
}

func run(ctx context.Context, args []string) int {
	cmd := newRoot()
	cmd.SetArgs(printArgs(cmd, args)) // flower -p: Claude Code's headless mode (print.go)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(os.Stderr, "flower:", ee.err)
		}
		return ee.code
	}
	// cobra's own errors (unknown flag, bad arguments) are usage errors.
	fmt.Fprintf(os.Stderr, "flower: %v (see flower --help)\n", err)
	return exitUsage
}

// fail is err from the library as the CLI exits with it: 2 for an error
// the person fixes by asking differently (flower.UsageError), else 1.
func fail(err error) error {
	if err == nil {
		return nil
	}
	var ue *flower.UsageError
	if errors.As(err, &ue) {
		return &exitError{code: exitUsage, err: err}
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code: exitFailed, err: err}
}
