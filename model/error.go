package model

import (
	"fmt"
	"time"
)

// APIError is a provider's error in neutral form. Adapters turn SDK errors
// into it so the runtime can classify them without knowing the SDKs.
type APIError struct {
	Provider   string        // "anthropic" or "openai"
	Status     int           // HTTP status; 200 for an error inside a stream
	Type       string        // the provider's error type, e.g. "overloaded_error"
	Message    string        // the provider's message
	RequestID  string        // the request id header, when present
	RetryAfter time.Duration // from retry-after / retry-after-ms; 0 when absent
	Err        error         // the SDK's error
}

// Error is one line: provider, status, type and message — never the whole
// response body.
func (e *APIError) Error() string {
	s := fmt.Sprintf("%s: %d", e.Provider, e.Status)
	if e.Type != "" {
		s += " " + e.Type
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *APIError) Unwrap() error { return e.Err }
