package model

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Default bounds on a silent model server (issue 10). Thinking models may
// think for minutes before their first token, but the APIs send headers
// at once and then events (Anthropic pings) while they think: a stream
// silent for two minutes is dead.
const (
	DefaultFirstByteTimeout = 10 * time.Minute
	DefaultIdleTimeout      = 2 * time.Minute
)

// StallError is a model call cut because the server went silent: it
// accepted the request and sent no response within the first-byte
// timeout, or its response stopped for the idle timeout. It is a
// transient failure (resilience classifies it so): the call is retried.
type StallError struct {
	Phase string        // "first byte" or "stream idle"
	After time.Duration // the timeout that expired
}

func (e *StallError) Error() string {
	return fmt.Sprintf("model server silent for %s (%s timeout): connection cut", e.After, e.Phase)
}

// Timeout and Temporary make it a net.Error that says so.
func (e *StallError) Timeout() bool   { return true }
func (e *StallError) Temporary() bool { return true }

// Watchdog is an http.RoundTripper that cuts a model call whose server
// goes silent: no response headers within FirstByte, or no body bytes for
// Idle. The SDKs' own timeouts bound a whole call, which a long answer may
// rightly exceed; these bound silence only. Zero durations take the
// defaults.
type Watchdog struct {
	Base      http.RoundTripper // nil: Transport()
	FirstByte time.Duration
	Idle      time.Duration
}

// MaxIdlePerHost is how many idle connections to a model's host
// Transport keeps: one per run a process drives at once (a worker's 32),
// and then some.
const MaxIdlePerHost = 64

// Transport is the process's one transport to the model APIs, under every
// Watchdog given no Base: http.DefaultTransport's settings, but for the
// idle connections kept per host. net/http keeps 2, so with more runs in
// one process idle at once while their tools run, most connections were
// closed and the next requests dialed again, on the real API with a TLS
// handshake each time (issue 19; TestSideBySideRunsKeepTheirConnections
// in model/anthropic: 16 runs of 3 requests opened 44 connections where
// 16 do).
var Transport = sync.OnceValue(func() http.RoundTripper {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport // replaced by a wrapper: keep it
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = MaxIdlePerHost
	return t
})

// NewHTTPClient is an http.Client over a Watchdog with these timeouts.
func NewHTTPClient(firstByte, idle time.Duration) *http.Client {
	return &http.Client{Transport: &Watchdog{FirstByte: firstByte, Idle: idle}}
}

func (w *Watchdog) RoundTrip(req *http.Request) (*http.Response, error) {
	base := w.Base
	if base == nil {
		base = Transport()
	}
	first, idle := w.FirstByte, w.Idle
	if first <= 0 {
		first = DefaultFirstByteTimeout
	}
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	ctx, cancel := context.WithCancel(req.Context())
	d := &dog{cancel: cancel}
	d.arm("first byte", first)
	resp, err := base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		d.stop()
		if s := d.stalled(); s != nil {
			return nil, s
		}
		return nil, err
	}
	d.arm("stream idle", idle)
	resp.Body = &idleBody{rc: resp.Body, d: d, idle: idle}
	return resp, nil
}

// dog cancels a request when its timer fires and remembers why.
type dog struct {
	cancel context.CancelFunc
	mu     sync.Mutex // guards t and stall
	t      *time.Timer
	stall  *StallError
}

func (d *dog) arm(phase string, after time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.t != nil {
		d.t.Stop()
	}
	d.t = time.AfterFunc(after, func() {
		d.mu.Lock()
		d.stall = &StallError{Phase: phase, After: after}
		d.mu.Unlock()
		d.cancel()
	})
}

// feed restarts the running timer after a read that brought bytes.
func (d *dog) feed(after time.Duration) {
	d.mu.Lock()
	if d.t != nil && d.stall == nil {
		d.t.Reset(after)
	}
	d.mu.Unlock()
}

func (d *dog) stop() {
	d.mu.Lock()
	if d.t != nil {
		d.t.Stop()
	}
	d.mu.Unlock()
	d.cancel()
}

func (d *dog) stalled() *StallError {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stall
}

// idleBody is a response body whose reads keep the watchdog fed; once it
// fired, reads fail with its StallError.
type idleBody struct {
	rc   io.ReadCloser
	d    *dog
	idle time.Duration
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if s := b.d.stalled(); s != nil {
		return n, s
	}
	if n > 0 {
		b.d.feed(b.idle)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.d.stop()
	return b.rc.Close()
}
