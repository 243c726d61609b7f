package flower

import "fmt"

// UsageError is an error the caller can fix by changing what it asked for
// (a flag, a file, an environment variable): the CLI exits 2 with it.
// Its text is one line that names the fix.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usage(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}
