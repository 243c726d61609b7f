package web_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/flower-run/flower/event"
)

// The page streams text as its deltas come, keeps the run's history and
// verdict after the run ended, survives a reload without the token in its
// address, and starts the next wake (issue 11).
func TestPageOutlivesTheRunInARealBrowser(t *testing.T) {
	wakes := make(chan string, 1)
	f := newFixture(t, fixtureOptions{wake: func(text string) error { wakes <- text; return nil }})
	ctx := browser(t)
	f.events.Publish(event.Event{Kind: event.Step, Text: "-> starting in ~/proj  · model demo · offline fake model",
		Payload: map[string]any{"banner": true, "wake": 1, "workspace": "~/proj"}})
	f.events.Publish(event.Event{Kind: event.Step, Text: "── 3/4 work (new session)", Payload: map[string]any{"step": "work"}})
	f.events.Publish(event.Event{Kind: event.Delta, Text: "Writing the gree", Payload: map[string]any{"step": "work"}})
	if err := chromedp.Do(ctx,
		chromedp.Navigate(f.srv.URL+"/?token="+token),
		chromedp.WaitVisible(chromedp.CSS(`#status[data-state="live"]`)),
		chromedp.WaitVisible(chromedp.Search(`//div[contains(@class,"ev live") and contains(., "Writing the gree")]`)),
	); err != nil {
		t.Fatalf("load the page and see the streamed text: %v", err)
	}
	search, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search`))
	if err != nil {
		t.Fatal(err)
	}
	if search != "" {
		t.Errorf("the token stays in the address bar: %q", search)
	}
	f.events.Publish(event.Event{Kind: event.Delta, Text: "ting file.", Payload: map[string]any{"step": "work"}})
	f.events.Publish(event.Event{Kind: event.Text, Text: "Writing the greeting file.", Payload: map[string]any{"step": "work"}})
	f.events.Publish(event.Event{Kind: event.Usage, Payload: map[string]any{"step": "work", "cost": 0.0042, "context": 5200, "window": 200000}})
	f.events.Publish(event.Event{Kind: event.Result, Payload: map[string]any{"step": "work", "ok": true, "cost": 0.0042, "turns": 2}})
	f.events.Publish(event.Event{Kind: event.Step, Text: "✓ the run passed · $0.0042 · 3s", Payload: map[string]any{"ended": true, "ok": true, "cost": 0.0042}})
	ended := chromedp.Search(`//div[contains(@class,"ev ended") and contains(., "the run passed")]`)
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(ended),
		chromedp.WaitVisible(chromedp.Search(`//div[contains(@class,"ev text") and not(contains(@class,"live")) and contains(., "Writing the greeting file.")]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`.ev.live`)),
		chromedp.WaitVisible(chromedp.CSS(`#next`)),
		chromedp.WaitVisible(chromedp.Search(`//div[contains(@class,"ev done") and contains(., "$0.0042")]`)),
		chromedp.WaitVisible(chromedp.Search(`//span[@id="fact-step-cost" and .="$0.0042"]`)),
	); err != nil {
		t.Fatalf("the page after the run: %v", err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot: %v", err)
	}
	path := os.Getenv("FLOWER_SCREENSHOT_ENDED")
	if path == "" {
		path = filepath.Join(t.TempDir(), "ended.png")
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}

	if err := chromedp.Do(ctx,
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`#status[data-state="live"]`)),
		chromedp.WaitVisible(ended),
		chromedp.WaitVisible(chromedp.CSS(`#next`)),
		chromedp.SendKeys(chromedp.CSS(`#next-text`), "also say goodbye"),
		chromedp.Click(chromedp.CSS(`#next-go`)),
	); err != nil {
		t.Fatalf("reload, then the next wake: %v", err)
	}
	select {
	case got := <-wakes:
		if strings.TrimSpace(got) != "also say goodbye" {
			t.Errorf("next wake with %q", got)
		}
	case <-watchdog(t).Done():
		t.Fatal("the page did not start the next wake")
	}
}
