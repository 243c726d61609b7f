package resilience_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/resilience"
)

// Texts as the providers, their SDKs, model.APIError and Go's net stack
// actually print them (wire-formats.md §1.5, §2.4).
func TestClassify(t *testing.T) {
	tests := []struct {
		text string
		want resilience.Class
	}{
		// Anthropic, through model.APIError.Error().
		{"anthropic: 400 invalid_request_error: temperature: Extra inputs are not permitted", resilience.Fatal},
		{"anthropic: 401 authentication_error: invalid x-api-key", resilience.Fatal},
		{"anthropic: 402 billing_error", resilience.Fatal},
		{"anthropic: 403 permission_error", resilience.Fatal},
		{"anthropic: 404 not_found_error: model: claude-x", resilience.Fatal},
		{"anthropic: 413 request_too_large: Request exceeds the maximum allowed number of bytes.", resilience.Fatal},
		{"anthropic: 400 invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum", resilience.Fatal},
		{"anthropic: 409 conflict_error", resilience.Transient},
		{"anthropic: 429 rate_limit_error: Number of request tokens has exceeded your per-minute rate limit", resilience.Transient},
		{"anthropic: 500 api_error: Internal server error", resilience.Transient},
		{"anthropic: 502", resilience.Transient},
		{"anthropic: 504 timeout_error", resilience.Transient},
		{"anthropic: 529 overloaded_error: Overloaded", resilience.Transient},
		{"anthropic: 200 overloaded_error: Overloaded", resilience.Transient},
		// Fatal is checked first: a connection word never rescues an auth error.
		{"authentication_error: connection reset by peer", resilience.Fatal},
		{"anthropic: 401 authentication_error: connection refused", resilience.Fatal},
		// anthropic-sdk-go v2 *Error.Error().
		{`POST "https://api.anthropic.com/v1/messages": 401 Unauthorized (Request-ID: req_011CV4013) {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CV4013"}`, resilience.Fatal},
		{`POST "https://api.anthropic.com/v1/messages": 529  (Request-ID: req_011CV5290) {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CV5290"}`, resilience.Transient},
		{`POST "https://api.anthropic.com/v1/messages": 502 Bad Gateway <html><body>bad gateway</body></html>`, resilience.Transient},
		{`200 OK {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011C"}`, resilience.Transient},
		// OpenAI, through model.APIError and the SDK's own text.
		{"openai: 401 invalid_api_key: Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys.", resilience.Fatal},
		{"openai: 404 model_not_found: The model `gpt-9` does not exist or you do not have access to it.", resilience.Fatal},
		{"openai: 400 context_length_exceeded: This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.", resilience.Fatal},
		{"openai: 429 insufficient_quota: You exceeded your current quota, please check your plan and billing details.", resilience.Fatal},
		{"openai: 429 rate_limit_exceeded: Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 4s.", resilience.Transient},
		{"openai: 500 server_error: The server had an error while processing your request. Sorry about that!", resilience.Transient},
		{"openai: 503 service_unavailable", resilience.Transient},
		{"The server had an error while processing your request. Sorry about that!", resilience.Transient},
		{"OpenAI API error: 401 Unauthorized", resilience.Fatal},
		{"OpenAI API error: 403 Forbidden", resilience.Fatal},
		{"OpenAI API error: 429 Too Many Requests", resilience.Transient},
		{"OpenAI API error: 503 Service Unavailable", resilience.Transient},
		// Go's net stack.
		{"dial tcp 127.0.0.1:1: connect: connection refused", resilience.Transient},
		{"read tcp 192.168.1.20:51234->160.79.104.10:443: read: connection reset by peer", resilience.Transient},
		{"unexpected EOF", resilience.Transient},
		{`Post "https://api.anthropic.com/v1/messages": EOF`, resilience.Transient},
		{"write tcp 10.0.0.2:40000->10.0.0.1:443: write: broken pipe", resilience.Transient},
		{"lookup api.anthropic.com: no such host", resilience.Transient},
		{"dial tcp: lookup api.anthropic.com on 127.0.0.53:53: server misbehaving", resilience.Transient},
		{"dial tcp: lookup api.anthropic.com: Temporary failure in name resolution", resilience.Transient},
		{"dial tcp [2607:6bc0::10]:443: connect: network is unreachable", resilience.Transient},
		{"dial tcp 160.79.104.10:443: i/o timeout", resilience.Transient},
		{"net/http: TLS handshake timeout", resilience.Transient},
		{`Post "https://api.anthropic.com/v1/messages": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, resilience.Transient},
		{"anthropic stream: stream ended early", resilience.Transient},
		// A port that looks like a status is not a status.
		{"dial tcp 127.0.0.1:404: connect: connection refused", resilience.Transient},
		{"dial tcp 127.0.0.1:4010: connect: connection refused", resilience.Transient},
		// Nothing we know.
		{"json: cannot unmarshal number into Go value of type string", resilience.Unknown},
		{"thereof", resilience.Unknown},
		{"", resilience.Unknown},
	}
	for _, tt := range tests {
		if got := resilience.Classify(tt.text); got != tt.want {
			t.Errorf("Classify(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func apiErr(provider string, status int, typ, msg string) *model.APIError {
	return &model.APIError{Provider: provider, Status: status, Type: typ, Message: msg}
}

func TestClassifyErr(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp",
		Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1},
		Err:  os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	noHost := &net.DNSError{Err: "no such host", Name: "api.anthropic.com", IsNotFound: true}
	tests := []struct {
		name string
		err  error
		want resilience.Class
	}{
		{"401 by status", apiErr("anthropic", 401, "authentication_error", "invalid x-api-key"), resilience.Fatal},
		{"402 by status", apiErr("anthropic", 402, "billing_error", ""), resilience.Fatal},
		{"403 by status", apiErr("openai", 403, "", ""), resilience.Fatal},
		{"404 by status", apiErr("openai", 404, "model_not_found", "The model `gpt-9` does not exist"), resilience.Fatal},
		{"400 by status", apiErr("anthropic", 400, "invalid_request_error", "temperature: Extra inputs are not permitted"), resilience.Fatal},
		{"413 by status", apiErr("anthropic", 413, "request_too_large", ""), resilience.Fatal},
		{"quota on a 429 is fatal", apiErr("openai", 429, "insufficient_quota", "You exceeded your current quota"), resilience.Fatal},
		{"429", apiErr("anthropic", 429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"), resilience.Transient},
		{"408", apiErr("openai", 408, "", ""), resilience.Transient},
		{"409", apiErr("anthropic", 409, "conflict_error", ""), resilience.Transient},
		{"500", apiErr("anthropic", 500, "api_error", "Internal server error"), resilience.Transient},
		{"502 html body, no type", apiErr("anthropic", 502, "", ""), resilience.Transient},
		{"529", apiErr("anthropic", 529, "overloaded_error", "Overloaded"), resilience.Transient},
		{"stream error", apiErr("anthropic", 200, "overloaded_error", "Overloaded"), resilience.Transient},
		{"openai stream error", apiErr("openai", 200, "server_error", "The server had an error while processing your request."), resilience.Transient},
		{"fatal type inside a stream", apiErr("anthropic", 200, "invalid_request_error", "prompt is too long"), resilience.Fatal},
		{"wrapped api error", fmt.Errorf("model call: %w", apiErr("anthropic", 529, "overloaded_error", "Overloaded")), resilience.Transient},
		{"odd status falls back to text", apiErr("openai", 422, "", "model not found"), resilience.Fatal},
		{"cancelled", context.Canceled, resilience.Fatal},
		{"cancelled inside url error", &url.Error{Op: "Post", URL: "https://api.anthropic.com/v1/messages", Err: context.Canceled}, resilience.Fatal},
		{"connection refused", refused, resilience.Transient},
		{"refused inside url error", &url.Error{Op: "Post", URL: "https://api.anthropic.com/v1/messages", Err: refused}, resilience.Transient},
		{"no such host", noHost, resilience.Transient},
		{"unexpected EOF", io.ErrUnexpectedEOF, resilience.Transient},
		{"wrapped EOF", fmt.Errorf("openai stream: %w", io.ErrUnexpectedEOF), resilience.Transient},
		{"typed net error with odd text", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("weird")}, resilience.Transient},
		{"unknown", errors.New("json: cannot unmarshal number"), resilience.Unknown},
		{"nil", nil, resilience.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resilience.ClassifyErr(tt.err); got != tt.want {
				t.Errorf("ClassifyErr(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestClassifyNetErrorTexts(t *testing.T) {
	// The texts the typed errors above really print, checked once so the
	// Classify table does not drift from Go's wording.
	refused := &net.OpError{Op: "dial", Net: "tcp",
		Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1},
		Err:  os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	noHost := &net.DNSError{Err: "no such host", Name: "api.anthropic.com", IsNotFound: true}
	tests := []struct {
		err  error
		want string
	}{
		{refused, "dial tcp 127.0.0.1:1: connect: connection refused"},
		{noHost, "lookup api.anthropic.com: no such host"},
		{io.ErrUnexpectedEOF, "unexpected EOF"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestClassString(t *testing.T) {
	tests := []struct {
		c    resilience.Class
		want string
	}{
		{resilience.Transient, "transient"},
		{resilience.Fatal, "fatal"},
		{resilience.Unknown, "unknown"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// A real refused dial, not a hand-made one, must classify as transient.
func TestClassifyRealDialError(t *testing.T) {
	ln := listen(t)
	addr := ln.Addr().String()
	ln.Close()
	_, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		t.Skip("closed port accepted a connection")
	}
	if got := resilience.ClassifyErr(err); got != resilience.Transient {
		t.Fatalf("ClassifyErr(%q) = %v, want transient", err, got)
	}
}
