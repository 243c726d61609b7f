package resilience_test

import (
	"testing"
	"time"

	"github.com/flower-run/flower/resilience"
)

func fixed(v float64) func() float64 { return func() float64 { return v } }

func TestDefaultPolicy(t *testing.T) {
	got := resilience.DefaultPolicy()
	want := resilience.Policy{
		MaxAttempts:    6,
		BaseDelay:      4 * time.Second,
		MaxDelay:       120 * time.Second,
		ProbeTimeout:   5 * time.Second,
		ProbeInterval:  15 * time.Second,
		MaxOfflineWait: 3600 * time.Second,
		RetryUnknown:   true,
	}
	if got != want {
		t.Fatalf("DefaultPolicy() = %+v, want %+v", got, want)
	}
}

func TestBackoff(t *testing.T) {
	p := resilience.DefaultPolicy()
	tests := []struct {
		attempt int
		rnd     func() float64
		want    time.Duration
	}{
		{1, fixed(0.5), 4 * time.Second},
		{2, fixed(0.5), 8 * time.Second},
		{3, fixed(0.5), 16 * time.Second},
		{4, fixed(0.5), 32 * time.Second},
		{5, fixed(0.5), 64 * time.Second},
		{6, fixed(0.5), 120 * time.Second}, // 128 s capped
		{100, fixed(0.5), 120 * time.Second},
		{0, fixed(0.5), 4 * time.Second},  // below 1 counts as the first
		{1, nil, 4 * time.Second},         // no rnd, no jitter
		{1, fixed(0), 3 * time.Second},    // -25 %
		{2, fixed(0.75), 9 * time.Second}, // +12.5 %
		{6, fixed(0), 90 * time.Second},   // jitter applies after the cap
	}
	for _, tt := range tests {
		if got := p.Backoff(tt.attempt, tt.rnd); got != tt.want {
			t.Errorf("Backoff(%d) = %v, want %v", tt.attempt, got, tt.want)
		}
	}
}

func TestBackoffJitterBounds(t *testing.T) {
	p := resilience.DefaultPolicy()
	const almostOne = 0.9999999
	for attempt := 1; attempt <= 8; attempt++ {
		mid := p.Backoff(attempt, fixed(0.5))
		lo, hi := p.Backoff(attempt, fixed(0)), p.Backoff(attempt, fixed(almostOne))
		if lo != mid*3/4 || hi >= mid*5/4 || hi < mid {
			t.Errorf("attempt %d: range [%v, %v] around %v, want [%v, %v)", attempt, lo, hi, mid, mid*3/4, mid*5/4)
		}
	}
}

func TestDelay(t *testing.T) {
	p := resilience.DefaultPolicy()
	tests := []struct {
		name       string
		attempt    int
		retryAfter time.Duration
		want       time.Duration
	}{
		{"no retry-after: backoff", 3, 0, 16 * time.Second},
		{"retry-after honoured", 1, 7 * time.Second, 7 * time.Second},
		{"retry-after shorter than backoff", 5, 2 * time.Second, 2 * time.Second},
		{"retry-after capped", 1, 10 * time.Minute, 120 * time.Second},
		{"negative retry-after ignored", 2, -time.Second, 8 * time.Second},
	}
	for _, tt := range tests {
		// rnd 0 would shorten a backoff; retry-after must ignore it.
		rnd := fixed(0.5)
		if tt.retryAfter > 0 {
			rnd = fixed(0)
		}
		if got := p.Delay(tt.attempt, tt.retryAfter, rnd); got != tt.want {
			t.Errorf("%s: Delay(%d, %v) = %v, want %v", tt.name, tt.attempt, tt.retryAfter, got, tt.want)
		}
	}
}
