package resilience_test

import (
	"maps"
	"testing"
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/resilience"
)

func TestNoticeEvent(t *testing.T) {
	until := time.Date(2026, 5, 1, 15, 4, 5, 0, time.UTC)
	tests := []struct {
		name      string
		notice    resilience.Notice
		wantText  string
		wantDelay float64
	}{
		{"retry",
			resilience.Notice{Reason: "retry", Attempt: 2, MaxAttempts: 6, Delay: 8 * time.Second, Until: until, Err: "overloaded error"},
			"overloaded error — attempt 2/6 in 8s", 8},
		{"retry with jitter rounds the text",
			resilience.Notice{Reason: "retry", Attempt: 3, MaxAttempts: 6, Delay: 9*time.Second + 123456789, Until: until, Err: "connection refused"},
			"connection refused — attempt 3/6 in 9s", 9.123456789},
		{"offline, the first notice says it all once",
			resilience.Notice{Reason: "offline", Attempt: 2, MaxAttempts: 6, Delay: 15 * time.Second, Until: until, Err: "connection refused",
				URL: "https://api.anthropic.com", GiveUp: 10 * time.Minute},
			"offline: cannot reach https://api.anthropic.com (connection refused); probing every 15s, giving up after 10m0s. Ctrl-C is safe: nothing is lost, run flower again to continue", 15},
		{"offline, later notices are short",
			resilience.Notice{Reason: "offline", Attempt: 2, MaxAttempts: 6, Delay: 15 * time.Second, Until: until, Err: "connection refused",
				URL: "https://api.anthropic.com", Offline: 45 * time.Second, GiveUp: 10 * time.Minute},
			"still offline after 45s — next probe at 15:04:05", 15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := tt.notice.Event()
			if ev.Kind != event.Retry || ev.Text != tt.wantText {
				t.Fatalf("got %s %q, want %s %q", ev.Kind, ev.Text, event.Retry, tt.wantText)
			}
			want := map[string]any{
				"reason": tt.notice.Reason, "attempt": tt.notice.Attempt, "max": 6,
				"delay_s": tt.wantDelay, "until": "2026-05-01T15:04:05Z", "error": tt.notice.Err,
			}
			if tt.notice.Reason == "offline" {
				want["offline_s"] = tt.notice.Offline.Seconds()
			}
			if !maps.Equal(ev.Payload, want) {
				t.Fatalf("payload:\n got %v\nwant %v", ev.Payload, want)
			}
		})
	}
}
