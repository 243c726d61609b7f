package resilience

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/flower-run/flower/model"
)

// Retrier runs a call until it succeeds, fails for good, or runs out of
// attempts. The zero Retrier uses DefaultPolicy, the real clock, no probe and
// math/rand. It holds no state between calls to Do.
type Retrier struct {
	Policy  Policy                         // the zero Policy means DefaultPolicy()
	Clock   Clock                          // nil means RealClock()
	Probe   func(ctx context.Context) bool // nil means always reachable
	Rand    func() float64                 // values in [0,1); nil means math/rand
	OnRetry func(Notice)                   // told before every wait; must not block
	URL     string                         // the endpoint Probe checks, for the offline notice
}

// ErrOffline is wrapped by the error of a call given up after the endpoint
// stayed unreachable for Policy.MaxOfflineWait.
var ErrOffline = errors.New("offline")

// Do calls call with attempt = 1, 2, … until it returns nil, a Fatal error
// (at once, without waiting), an Unknown error when the policy does not
// retry those, or the last of Policy.MaxAttempts attempts fails; it returns
// the number of calls made and the last error. Between attempts it waits the
// policy's delay — unless the endpoint is unreachable, in which case it parks
// and probes, and that waiting costs no attempt. A cancelled ctx ends Do
// promptly with ctx's error.
func (r *Retrier) Do(ctx context.Context, call func(ctx context.Context, attempt int) error) (attempts int, err error) {
	p := r.policy()
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return attempt - 1, ctx.Err()
		}
		callErr := call(ctx, attempt)
		switch {
		case callErr == nil:
			return attempt, nil
		case ctx.Err() != nil:
			return attempt, ctx.Err()
		case !p.retries(ClassifyErr(callErr)) || attempt >= p.MaxAttempts:
			return attempt, callErr
		}
		if err := r.pause(ctx, p, attempt, callErr); err != nil {
			return attempt, err
		}
	}
}

// pause spends the time between a failed attempt and the next one: parked
// while the endpoint is unreachable, otherwise the policy's delay. Coming
// back from a park goes straight to the next attempt; the wait is spent.
func (r *Retrier) pause(ctx context.Context, p Policy, attempt int, lastErr error) error {
	parked, err := r.park(ctx, p, attempt, lastErr)
	if err != nil || parked {
		return err
	}
	d := p.Delay(attempt, retryAfter(lastErr), r.rand())
	r.notify(Notice{Reason: ReasonRetry, Attempt: attempt + 1, MaxAttempts: p.MaxAttempts,
		Delay: d, Until: r.clock().Now().Add(d), Err: short(lastErr)})
	return r.sleep(ctx, d)
}

// park waits, probing every ProbeInterval, until the endpoint answers or
// MaxOfflineWait has passed. It reports whether it had to wait at all.
func (r *Retrier) park(ctx context.Context, p Policy, attempt int, lastErr error) (bool, error) {
	if r.reachable(ctx) {
		return false, nil
	}
	start := r.clock().Now()
	for first := true; ; first = false {
		waited := r.clock().Now().Sub(start)
		offline := waited
		if first {
			offline = 0 // the first notice of this wait: said in full
		}
		if waited >= p.MaxOfflineWait {
			return true, fmt.Errorf("%w for more than %v: %w", ErrOffline, p.MaxOfflineWait, lastErr)
		}
		d := min(p.probeInterval(), p.MaxOfflineWait-waited)
		r.notify(Notice{Reason: ReasonOffline, Attempt: attempt + 1, MaxAttempts: p.MaxAttempts,
			Delay: d, Until: r.clock().Now().Add(d), Err: short(lastErr),
			URL: r.URL, Offline: offline, GiveUp: p.MaxOfflineWait})
		if err := r.sleep(ctx, d); err != nil {
			return true, err
		}
		if r.reachable(ctx) {
			return true, nil
		}
	}
}

// sleep waits d on the clock, or until ctx is done.
func (r *Retrier) sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-r.clock().After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Retrier) reachable(ctx context.Context) bool {
	return r.Probe == nil || r.Probe(ctx)
}

func (r *Retrier) notify(n Notice) {
	if r.OnRetry != nil {
		r.OnRetry(n)
	}
}

func (r *Retrier) policy() Policy {
	if r.Policy == (Policy{}) {
		return DefaultPolicy()
	}
	return r.Policy
}

func (r *Retrier) clock() Clock {
	if r.Clock == nil {
		return RealClock()
	}
	return r.Clock
}

func (r *Retrier) rand() func() float64 {
	if r.Rand == nil {
		return rand.Float64
	}
	return r.Rand
}

// retryAfter is the server's requested wait, when the error carries one.
func retryAfter(err error) time.Duration {
	var apiErr *model.APIError
	if errors.As(err, &apiErr) {
		return apiErr.RetryAfter
	}
	return 0
}
