package web_test

import (
	"context"
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
