package resilience_test

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/resilience"
	"github.com/flower-run/flower/resilience/clocktest"
)

var _ resilience.Clock = (*clocktest.Fake)(nil)

var start = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)

var (
	overloaded = &model.APIError{Provider: "anthropic", Status: 529, Type: "overloaded_error", Message: "Overloaded"}
	badKey     = errors.New("authentication_error: invalid x-api-key (connection reset by peer)")
	refused    = &net.OpError{Op: "dial", Net: "tcp",
		Addr: &net.TCPAddr{IP: net.IPv4(160, 79, 104, 10), Port: 443},
		Err:  os.NewSyscallError("connect", syscall.ECONNREFUSED)}
)

// harness is a Retrier on a fake clock that records its notices.
type harness struct {
	clock   *clocktest.Fake
	r       *resilience.Retrier
	mu      sync.Mutex // guards notices
	notices []resilience.Notice
}

func newHarness() *harness {
	h := &harness{clock: clocktest.New(start)}
	h.r = &resilience.Retrier{
		Policy:  resilience.DefaultPolicy(),
		Clock:   h.clock,
		Rand:    fixed(0.5), // no jitter: delays are exact
		OnRetry: func(n resilience.Notice) { h.mu.Lock(); h.notices = append(h.notices, n); h.mu.Unlock() },
	}
	return h
}

// run calls Do in a goroutine and, whenever Do blocks on the clock, jumps
// the clock to that timer. It returns Do's results and every wait taken.
func (h *harness) run(ctx context.Context, call func(context.Context, int) error) (int, error, []time.Duration) {
	type result struct {
		attempts int
		err      error
	}
	done := make(chan result, 1)
	go func() {
		n, err := h.r.Do(ctx, call)
		done <- result{n, err}
	}()
	var waits []time.Duration
	for {
		select {
		case res := <-done:
			return res.attempts, res.err, waits
		case <-h.clock.Waiting(1):
			waits = append(waits, h.clock.AdvanceNext())
		}
	}
}

func (h *harness) reasons() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, n := range h.notices {
		out = append(out, n.Reason)
	}
	return out
}

// failing returns a call that fails with errs in turn, then succeeds.
func failing(errs ...error) func(context.Context, int) error {
	return func(_ context.Context, attempt int) error {
		if attempt <= len(errs) {
			return errs[attempt-1]
		}
		return nil
	}
}

func secs(ss ...int) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = time.Duration(s) * time.Second
	}
	return out
}

func TestDoTransientRetriedWithExactDelays(t *testing.T) {
	h := newHarness()
	attempts, err, waits := h.run(context.Background(), failing(overloaded, overloaded, refused))
	if err != nil || attempts != 4 {
		t.Fatalf("Do = %d, %v; want 4, nil", attempts, err)
	}
	if want := secs(4, 8, 16); !slices.Equal(waits, want) {
		t.Fatalf("waits: got %v, want %v", waits, want)
	}
	want := []resilience.Notice{
		{Reason: "retry", Attempt: 2, MaxAttempts: 6, Delay: 4 * time.Second, Until: start.Add(4 * time.Second), Err: "overloaded error"},
		{Reason: "retry", Attempt: 3, MaxAttempts: 6, Delay: 8 * time.Second, Until: start.Add(12 * time.Second), Err: "overloaded error"},
		{Reason: "retry", Attempt: 4, MaxAttempts: 6, Delay: 16 * time.Second, Until: start.Add(28 * time.Second), Err: "connection refused"},
	}
	if !slices.Equal(h.notices, want) {
		t.Fatalf("notices:\n got %+v\nwant %+v", h.notices, want)
	}
}

func TestDoRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter time.Duration
		want       time.Duration
	}{
		{"honoured", 7 * time.Second, 7 * time.Second},
		{"capped at MaxDelay", 10 * time.Minute, 120 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limited := &model.APIError{Provider: "anthropic", Status: 429, Type: "rate_limit_error", RetryAfter: tt.retryAfter}
			h := newHarness()
			attempts, err, waits := h.run(context.Background(), failing(limited))
			if err != nil || attempts != 2 {
				t.Fatalf("Do = %d, %v; want 2, nil", attempts, err)
			}
			if want := []time.Duration{tt.want}; !slices.Equal(waits, want) {
				t.Fatalf("waits: got %v, want %v", waits, want)
			}
		})
	}
}

func TestDoStopsWithoutWaiting(t *testing.T) {
	tests := []struct {
		name         string
		retryUnknown bool
		err          error
	}{
		{"fatal text mentioning connection", true, badKey},
		{"fatal status", true, &model.APIError{Provider: "openai", Status: 401, Type: "invalid_api_key"}},
		{"cancelled call", true, context.Canceled},
		{"unknown, not retried", false, errors.New("json: cannot unmarshal number")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness()
			h.r.Policy.RetryUnknown = tt.retryUnknown
			attempts, err, waits := h.run(context.Background(), failing(tt.err, tt.err))
			if attempts != 1 || !errors.Is(err, tt.err) {
				t.Fatalf("Do = %d, %v; want 1, %v", attempts, err, tt.err)
			}
			if len(waits) != 0 || len(h.notices) != 0 || h.clock.Pending() != 0 {
				t.Fatalf("waited: waits %v, notices %v, pending %d", waits, h.notices, h.clock.Pending())
			}
		})
	}
}

func TestDoRetriesUnknownByDefault(t *testing.T) {
	h := newHarness()
	attempts, err, waits := h.run(context.Background(), failing(errors.New("something odd")))
	if err != nil || attempts != 2 {
		t.Fatalf("Do = %d, %v; want 2, nil", attempts, err)
	}
	if want := secs(4); !slices.Equal(waits, want) {
		t.Fatalf("waits: got %v, want %v", waits, want)
	}
}

func TestDoMaxAttempts(t *testing.T) {
	h := newHarness()
	calls := 0
	attempts, err, waits := h.run(context.Background(), func(context.Context, int) error {
		calls++
		return overloaded
	})
	if attempts != 6 || calls != 6 || !errors.Is(err, overloaded) {
		t.Fatalf("Do = %d (calls %d), %v; want 6 (6), %v", attempts, calls, err, overloaded)
	}
	if want := secs(4, 8, 16, 32, 64); !slices.Equal(waits, want) {
		t.Fatalf("waits: got %v, want %v", waits, want)
	}
}

func TestDoSurvivesTenMinutesOffline(t *testing.T) {
	h := newHarness()
	back := start.Add(10 * time.Minute)
	probes := 0
	h.r.Probe = func(context.Context) bool { probes++; return !h.clock.Now().Before(back) }

	attempts, err, waits := h.run(context.Background(), failing(refused))
	if err != nil || attempts != 2 {
		t.Fatalf("Do = %d, %v; want 2, nil (offline waiting costs no attempts)", attempts, err)
	}
	offline := slices.Repeat([]string{"offline"}, 40) // probes at 0 s, 15 s, …, 585 s fail
	if got := h.reasons(); !slices.Equal(got, offline) {
		t.Fatalf("notices: got %d %v, want 40 offline", len(got), got)
	}
	if got, want := probes, 41; got != want {
		t.Errorf("probes: got %d, want %d", got, want)
	}
	if want := slices.Repeat(secs(15), 40); !slices.Equal(waits, want) {
		t.Errorf("waits: got %v, want 40 × 15s", waits)
	}
	if got := h.clock.Now(); !got.Equal(back) {
		t.Errorf("resumed at %v, want %v", got, back)
	}
	first := h.notices[0]
	if first.Attempt != 2 || first.Err != "connection refused" || !first.Until.Equal(start.Add(15*time.Second)) {
		t.Errorf("first notice: got %+v", first)
	}
}

func TestDoGivesUpAfterMaxOfflineWait(t *testing.T) {
	h := newHarness()
	h.r.Probe = func(context.Context) bool { return false }

	attempts, err, waits := h.run(context.Background(), failing(refused))
	want := "offline for more than 1h0m0s: dial tcp 160.79.104.10:443: connect: connection refused"
	if attempts != 1 || err == nil || err.Error() != want {
		t.Fatalf("Do = %d, %v; want 1, %q", attempts, err, want)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("error does not wrap the last call error: %v", err)
	}
	if got, want := h.clock.Now().Sub(start), time.Hour; got != want {
		t.Errorf("gave up after %v, want %v", got, want)
	}
	if got, want := len(waits), 240; got != want {
		t.Errorf("waits: got %d, want %d", got, want)
	}
}

func TestDoReachableProbeGoesToBackoff(t *testing.T) {
	h := newHarness()
	h.r.Probe = func(context.Context) bool { return true }
	attempts, err, waits := h.run(context.Background(), failing(overloaded))
	if err != nil || attempts != 2 {
		t.Fatalf("Do = %d, %v; want 2, nil", attempts, err)
	}
	if want := secs(4); !slices.Equal(waits, want) {
		t.Fatalf("waits: got %v, want %v", waits, want)
	}
	if got, want := h.reasons(), []string{"retry"}; !slices.Equal(got, want) {
		t.Fatalf("reasons: got %v, want %v", got, want)
	}
}

func TestDoCancelDuringWait(t *testing.T) {
	for _, offline := range []bool{false, true} {
		h := newHarness()
		h.r.Probe = func(context.Context) bool { return !offline }
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := h.r.Do(ctx, failing(overloaded))
			done <- err
		}()
		h.clock.WaitForTimers(1) // Do is now blocked in a wait
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("offline=%v: Do returned %v, want context.Canceled", offline, err)
		}
	}
}

func TestDoCancelledDuringCall(t *testing.T) {
	h := newHarness()
	ctx, cancel := context.WithCancel(context.Background())
	attempts, err, waits := h.run(ctx, func(context.Context, int) error {
		cancel()
		return refused // what a transport reports when its request is torn down
	})
	if attempts != 1 || !errors.Is(err, context.Canceled) || len(waits) != 0 {
		t.Fatalf("Do = %d, %v, waits %v; want 1, context.Canceled, none", attempts, err, waits)
	}
}

func TestDoAlreadyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	attempts, err := newHarness().r.Do(ctx, func(context.Context, int) error { called = true; return nil })
	if attempts != 0 || called || !errors.Is(err, context.Canceled) {
		t.Fatalf("Do = %d (called %v), %v; want 0 (false), context.Canceled", attempts, called, err)
	}
}

func TestZeroRetrierUsesDefaults(t *testing.T) {
	// The zero Retrier succeeds at once without touching the real clock.
	attempts, err := (&resilience.Retrier{}).Do(context.Background(), failing())
	if attempts != 1 || err != nil {
		t.Fatalf("Do = %d, %v; want 1, nil", attempts, err)
	}
}
