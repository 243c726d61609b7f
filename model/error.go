package model

import (
	"errors"
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

// keyVars names, per provider, the variables that hold its key.
var keyVars = map[string]string{
	"anthropic": "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)",
	"openai":    "OPENAI_API_KEY",
}

// Fix says in a few words what a person can do about err when it is an
// API error that retrying cannot cure, naming the variable or flag to
// change; "" when there is nothing to say (issue 23).
func Fix(err error) string {
	var e *APIError
	if !errors.As(err, &e) {
		return ""
	}
	vars := keyVars[e.Provider]
	if vars == "" {
		vars = "the provider's API key variable"
	}
	switch e.Status {
	case 401:
		return "the provider refused the API key: check " + vars + " (set, but wrong, revoked or for another endpoint)"
	case 403:
		return "the API key may not do this: check " + vars + " and the key's permissions with the provider"
	case 402:
		return "the provider's account needs credit or billing: see its console"
	case 404:
		return "the provider does not know this model or address: check --model (or $FLOWER_MODEL) and the provider's BASE_URL variable"
	}
	return ""
}
