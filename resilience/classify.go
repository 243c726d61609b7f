package resilience

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/flower-run/flower/model"
)

// Class says what retrying an error can achieve.
type Class int

const (
	Unknown   Class = iota // not recognised; Policy.RetryUnknown decides
	Transient              // the same request may succeed later
	Fatal                  // the same request fails again; stop now
)

func (c Class) String() string {
	switch c {
	case Transient:
		return "transient"
	case Fatal:
		return "fatal"
	}
	return "unknown"
}

// Phrases are matched against normalized text (see words) at word starts,
// so "eof" matches "unexpected EOF" but not "thereof", and "permission"
// also matches "permissions".
var (
	fatalPhrases = phrases(
		"authentication", "unauthorized", "forbidden", "invalid api key",
		"incorrect api key", "invalid x api key", "permission", "billing",
		"insufficient quota", "not found", "invalid request",
		"request too large", "context length exceeded", "prompt is too long",
	)
	transientPhrases = phrases(
		"overloaded", "rate limit", "too many requests", "api error",
		"server error", "server had an error", "bad gateway",
		"service unavailable", "timeout", "timed out", "deadline exceeded",
		"connection refused", "connection reset", "eof", "broken pipe",
		"no such host", "network is unreachable", "host is unreachable",
		"no route to host", "temporary failure", "server misbehaving",
		"stream ended early",
	)
)

// Classify sorts an error text. Fatal is checked first: an authentication
// error whose text also says "connection" must never be waited on.
func Classify(text string) Class {
	w := words(text)
	status := statusIn(text)
	switch {
	case fatalStatus(status) || hasPhrase(w, fatalPhrases):
		return Fatal
	case transientStatus(status) || hasPhrase(w, transientPhrases):
		return Transient
	}
	return Unknown
}

// ClassifyErr sorts an error by its type where the type is known and by its
// text otherwise. A cancelled context is Fatal: the person stopped the run,
// and retrying would undo that.
func ClassifyErr(err error) Class {
	if err == nil {
		return Unknown
	}
	var stall *model.StallError
	if errors.As(err, &stall) {
		return Transient // a silent server was cut by its watchdog: retry (issue 10)
	}
	if errors.Is(err, context.Canceled) {
		return Fatal
	}
	var apiErr *model.APIError
	if errors.As(err, &apiErr) {
		if c := classifyAPI(apiErr); c != Unknown {
			return c
		}
	}
	if c := Classify(err.Error()); c != Unknown {
		return c
	}
	if isNetwork(err) {
		return Transient
	}
	return Unknown
}

// classifyAPI trusts the status first. The type is checked before the
// transient statuses because OpenAI reports an exhausted quota
// (insufficient_quota) as a 429, which waiting does not cure. Status 200
// means the error arrived inside a stream, after the request was accepted.
func classifyAPI(e *model.APIError) Class {
	switch {
	case fatalStatus(e.Status):
		return Fatal
	case Classify(e.Type) == Fatal:
		return Fatal
	case e.Status == 200 || transientStatus(e.Status):
		return Transient
	}
	return Classify(e.Error())
}

// isNetwork catches transport failures whose text matched nothing above.
func isNetwork(err error) bool {
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return errors.As(err, &opErr) || errors.As(err, &dnsErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ENETUNREACH) ||
		errors.Is(err, syscall.EHOSTUNREACH)
}

func fatalStatus(s int) bool {
	switch s {
	case 400, 401, 402, 403, 404, 413:
		return true
	}
	return false
}

// transientStatus covers 5xx, which includes Anthropic's 529 (overloaded).
func transientStatus(s int) bool {
	return s == 408 || s == 409 || s == 429 || (s >= 500 && s <= 599)
}
