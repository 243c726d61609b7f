package resilience

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model"
)

// Reasons a Retrier waits.
const (
	ReasonRetry   = "retry"   // backing off after a transient error
	ReasonOffline = "offline" // the endpoint is unreachable; probing
)

// Notice tells a person that the run is waiting and until when.
type Notice struct {
	Reason      string        // ReasonRetry or ReasonOffline
	Attempt     int           // the attempt that runs when the wait ends
	MaxAttempts int           // the policy's limit
	Delay       time.Duration // length of this wait
	Until       time.Time     // end of this wait; for offline, the next probe
	Err         string        // the last error, short
	URL         string        // for offline, the endpoint probed ("" unknown)
	Offline     time.Duration // for offline, how long it has been so far
	GiveUp      time.Duration // for offline, how long it waits in all
}

// Event renders the notice as an event.Retry, e.g.
// "overloaded error — attempt 2/6 in 4s" or "offline — next probe at 15:04:05".
func (n Notice) Event() event.Event {
	text := fmt.Sprintf("%s — attempt %d/%d in %s", n.Err, n.Attempt, n.MaxAttempts, roundDelay(n.Delay))
	if n.Reason == ReasonOffline {
		text = n.offlineText()
	}
	e := event.Event{Kind: event.Retry, Text: text, Payload: map[string]any{
		"reason":  n.Reason,
		"attempt": n.Attempt,
		"max":     n.MaxAttempts,
		"delay_s": n.Delay.Seconds(),
		"until":   n.Until.Format(time.RFC3339),
		"error":   n.Err,
	}}
	if n.Reason == ReasonOffline {
		e.Payload["offline_s"] = n.Offline.Seconds()
	}
	return e
}

// offlineText says it once in full, when the wait begins: what cannot be
// reached, how often it is probed, when flower gives up, and that stopping
// loses nothing; later notices only say when the next probe is.
func (n Notice) offlineText() string {
	if n.Offline > 0 {
		return fmt.Sprintf("still offline after %s — next probe at %s", roundDelay(n.Offline), n.Until.Format("15:04:05"))
	}
	where := "the model's endpoint"
	if n.URL != "" {
		where = n.URL
	}
	text := fmt.Sprintf("offline: cannot reach %s (%s); probing every %s", where, n.Err, roundDelay(n.Delay))
	if n.GiveUp > 0 {
		text += ", giving up after " + roundDelay(n.GiveUp).String()
	}
	return text + ". Ctrl-C is safe: nothing is lost, run flower again to continue"
}

// roundDelay drops the jitter's nanoseconds, which only add noise for a reader.
func roundDelay(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// short names an error in a few words for a notice: the provider's error
// type when there is one ("overloaded error"), else the last clause of the
// text ("connection refused"), at most 80 characters, one line.
func short(err error) string {
	var apiErr *model.APIError
	if errors.As(err, &apiErr) {
		if apiErr.Type != "" {
			return strings.ReplaceAll(apiErr.Type, "_", " ")
		}
		return fmt.Sprintf("status %d", apiErr.Status)
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		s = s[i+2:]
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}
