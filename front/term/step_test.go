package term

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flower-run/flower/event"
)

// TestStepLine: a step event's text is the bare step name (seed 004); the
// terminal prints the header the engine rendered, and the text of an event
// without one (a banner, an event stored by an older build).
func TestStepLine(t *testing.T) { // issue 22 item 5, R3.12
	tests := []struct {
		e    event.Event
		want string
	}{
		{event.Event{Kind: event.Step, Text: "work", Payload: map[string]any{"step": "work", "header": "── 3/4 work (connected)"}},
			"── 3/4 work (connected)"},
		{event.Event{Kind: event.Step, Text: "── 3/4 work (new session)", Payload: map[string]any{"step": "work"}},
			"── 3/4 work (new session)"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		NewRenderer(&b).Render(tt.e)
		if got := strings.TrimSpace(b.String()); got != tt.want {
			t.Errorf("Render(%+v) = %q, want %q", tt.e, got, tt.want)
		}
	}
}
