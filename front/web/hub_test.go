package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/human"
)

// TestHubOutlivesItsWakes: the hub steers the wake attached, refuses
// POST /wake while it runs, tells the page how it ended and what it cost,
// and hands the next wake's phrase to its owner once (issue 11).
func TestHubOutlivesItsWakes(t *testing.T) {
	r := localRig(t)
	hub := r.hub
	if code, v, _ := r.do("POST", "/wake", `{"text":"more"}`); code != http.StatusConflict {
		t.Errorf("POST /wake while a wake runs: %d %v, want 409", code, v)
	}
	hub.Sink(event.Event{Kind: event.Usage, Payload: map[string]any{"cost": 0.25}})
	r.end()
	hub.Ended(false, "stopped: run flower again")
	code, _, body := r.do("GET", "/events", "")
	if code != http.StatusOK || !strings.Contains(body, `"banner":true`) || !strings.Contains(body, `"ended":true`) ||
		!strings.Contains(body, "✗ stopped: run flower again · $0.25") {
		t.Errorf("GET /events after the wake: %d %s", code, body)
	}
	if code, v, _ := r.do("POST", "/oracle", `{"question":"how far?"}`); code != http.StatusBadGateway || !strings.Contains(v["error"].(string), "no run is going on") {
		t.Errorf("POST /oracle between wakes: %d %v", code, v)
	}
	if code, v, _ := r.do("POST", "/wake", `{"text":" more "}`); code != http.StatusOK || v["ok"] != true {
		t.Fatalf("POST /wake after the run: %d %v", code, v)
	}
	if code, _, _ := r.do("POST", "/wake", `{"text":""}`); code != http.StatusConflict {
		t.Errorf("a second POST /wake while the next starts: %d, want 409", code)
	}
	select {
	case p := <-hub.Next():
		if p != "more" {
			t.Errorf("next phrase %q, want %q", p, "more")
		}
	case <-watchdog(t).Done():
		t.Fatal("the next wake was never asked for")
	}

	// The next wake is steered in turn; the ask ids of the last are gone.
	ch := human.New(human.Options{Sink: hub.Sink, Timeout: human.Forever, Workbench: filepath.Join(t.TempDir(), ".flower")})
	detach := hub.Attach(web.Wake{Channel: ch, Interrupt: r.interrupt, Banner: "<- continuing", Number: 2,
		Oracle: func(context.Context, string) (string, error) { return "halfway", nil }})
	defer detach()
	if code, v, _ := r.do("POST", "/oracle", `{"question":"how far?"}`); code != http.StatusOK || v["answer"] != "halfway" {
		t.Errorf("POST /oracle in the next wake: %d %v", code, v)
	}
	if code, _, _ := r.do("POST", "/answer", `{"id":"q1","text":"x"}`); code != http.StatusNotFound {
		t.Errorf("an ask id of the last wake: %d, want 404", code)
	}
}

// TestBannerAndEndCarryTheStepPayload: every step event of flower serve,
// the banner and the end included, carries seed 004's {index, total,
// resumed, woke}, so a UI written for the seed can read them on any step
// event; the banner is index 0, the end is past the last step.
func TestBannerAndEndCarryTheStepPayload(t *testing.T) { // issue 22 item 5, R6.1
	r := localRig(t)
	r.hub.Sink(event.Event{Kind: event.Step, Text: "work", Payload: map[string]any{"step": "work", "index": 3, "total": 4,
		"resumed": false, "woke": 1}})
	r.end()
	r.hub.Ended(true, "")
	code, _, body := r.do("GET", "/events", "")
	var got struct {
		Events []struct {
			Kind    string         `json:"kind"`
			Payload map[string]any `json:"payload"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(body), &got); code != http.StatusOK || err != nil {
		t.Fatalf("GET /events: %d %v %s", code, err, body)
	}
	want := map[string][2]float64{"banner": {0, 0}, "ended": {4, 4}} // index, total
	for _, e := range got.Events {
		for flag, it := range want {
			if e.Kind != "step" || e.Payload[flag] != true {
				continue
			}
			if e.Payload["index"] != it[0] || e.Payload["total"] != it[1] || e.Payload["resumed"] != false || e.Payload["woke"] != 1.0 {
				t.Errorf("the %s event's payload %v: want index %v, total %v, resumed false, woke 1", flag, e.Payload, it[0], it[1])
			}
			delete(want, flag)
		}
	}
	if len(want) != 0 {
		t.Errorf("no %v step events in %s", want, body)
	}
}
