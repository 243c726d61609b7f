package resilience

import "time"

// Policy holds the numbers of R4.3. The zero Policy means DefaultPolicy().
type Policy struct {
	MaxAttempts    int           // calls in all, the first included
	BaseDelay      time.Duration // wait after the first failure
	MaxDelay       time.Duration // cap on any wait between attempts
	ProbeTimeout   time.Duration // bound on one reachability probe
	ProbeInterval  time.Duration // wait between probes while offline
	MaxOfflineWait time.Duration // give up after being offline this long
	RetryUnknown   bool          // retry errors Classify does not know
}

// DefaultPolicy returns the defaults of R4.3.
func DefaultPolicy() Policy {
	return Policy{
		MaxAttempts:    6,
		BaseDelay:      4 * time.Second,
		MaxDelay:       120 * time.Second,
		ProbeTimeout:   5 * time.Second,
		ProbeInterval:  15 * time.Second,
		MaxOfflineWait: 3600 * time.Second,
		RetryUnknown:   true,
	}
}

// Backoff is the wait after attempt (1-based) failed:
// min(BaseDelay·2^(attempt-1), MaxDelay), then jittered by ±25 % so that
// many runs hit by the same outage do not return in lockstep. rnd yields
// values in [0,1); 0.5 means no jitter, and nil means no jitter. The jitter
// is applied after the cap, so a capped wait may exceed MaxDelay by 25 %.
func (p Policy) Backoff(attempt int, rnd func() float64) time.Duration {
	d := p.BaseDelay
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2 // doubling stepwise cannot overflow the way a shift can
	}
	d = min(d, p.MaxDelay)
	if rnd == nil {
		return d
	}
	return time.Duration(float64(d) * (0.75 + 0.5*rnd()))
}

// Delay is the wait after attempt failed. A server's retry-after is
// honoured as given, without jitter — the server chose the moment — but
// never beyond MaxDelay.
func (p Policy) Delay(attempt int, retryAfter time.Duration, rnd func() float64) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, p.MaxDelay)
	}
	return p.Backoff(attempt, rnd)
}

// retries reports whether an error of class c is worth another attempt.
func (p Policy) retries(c Class) bool {
	return c == Transient || (c == Unknown && p.RetryUnknown)
}

// probeInterval guards against a zero interval, which would spin.
func (p Policy) probeInterval() time.Duration {
	if p.ProbeInterval > 0 {
		return p.ProbeInterval
	}
	return DefaultPolicy().ProbeInterval
}
