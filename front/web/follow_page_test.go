package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/flower-run/flower/event"
)

const (
	atBottom = `document.getElementById('events').lastElementChild.getBoundingClientRect().bottom <= window.innerHeight`
	// afterFrames lets the page handle the scroll it was just given.
	afterFrames = `new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`
)

// The page follows new events to the bottom unless the person scrolled
// up to read; scrolling back down follows again (issue 23).
func TestPageFollowsTheStreamInARealBrowser(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := browser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(f.srv.URL+"/?token="+token),
		chromedp.WaitVisible(chromedp.CSS(`#status[data-state="live"]`)),
	); err != nil {
		t.Fatal(err)
	}
	lines := func(from, to int) chromedp.Action[chromedp.Void] {
		for i := from; i < to; i++ {
			f.events.Publish(event.Event{Kind: event.Text, Text: fmt.Sprintf("line %d: %s", i, strings.Repeat("word ", 40))})
		}
		return chromedp.WaitReady(chromedp.Search(fmt.Sprintf(`//div[contains(@class,"ev text") and starts-with(., "line %d:")]`, to-1)))
	}
	if err := chromedp.Do(ctx, lines(0, 60), chromedp.Poll[chromedp.Void](atBottom)); err != nil {
		t.Fatalf("a long stream is not followed to its end: %v", err)
	}

	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.scrollTo(0, 0), `+afterFrames, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, lines(60, 70)); err != nil {
		t.Fatal(err)
	}
	if y, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.scrollY`)); err != nil || y > 100 {
		t.Fatalf("scrolled up to read, the page moved to %v (%v): it must stay", y, err)
	}

	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.scrollTo(0, document.documentElement.scrollHeight), `+afterFrames, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, lines(70, 90), chromedp.Poll[chromedp.Void](atBottom)); err != nil {
		t.Fatalf("back at the bottom, the page does not follow again: %v", err)
	}
}

// After the run the page shows its end state, the verdict, cost and
// duration, and the controls that steer a run are off until the next
// wake's banner (issue 23).
func TestPageShowsTheEndStateInARealBrowser(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := browser(t)
	f.events.Publish(event.Event{Kind: event.Step, Text: "-> starting in ~/proj", Payload: map[string]any{"banner": true, "wake": 1}})
	f.events.Publish(event.Event{Kind: event.Step, Text: "── 4/4 judge (new session)", Payload: map[string]any{"step": "judge"}})
	disabled := `['mail-send','interrupt','oracle-ask'].map((id) => document.getElementById(id).disabled).join()`
	if err := chromedp.Do(ctx,
		chromedp.Navigate(f.srv.URL+"/?token="+token),
		chromedp.WaitVisible(chromedp.Search(`//span[@id="fact-step" and contains(., "judge")]`)),
	); err != nil {
		t.Fatal(err)
	}
	if got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](disabled)); got != "false,false,false" {
		t.Errorf("while the run goes on, controls disabled: %s", got)
	}
	f.events.Publish(event.Event{Kind: event.Step, Text: "✗ verdict failed · $0.0042 · 1m12s",
		Payload: map[string]any{"ended": true, "ok": false, "cost": 0.0042, "duration_s": 72.0}})
	for _, reload := range []bool{false, true} {
		if reload {
			if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
				t.Fatal(err)
			}
		}
		if err := chromedp.Do(ctx,
			chromedp.WaitVisible(chromedp.Search(`//span[@id="fact-step" and .="ended · stopped"]`)),
			chromedp.WaitVisible(chromedp.Search(`//h2[@id="next-title" and .="The run stopped · $0.0042 · 1 min 12 s"]`)),
		); err != nil {
			t.Fatalf("end state (reload %v): %v", reload, err)
		}
		if got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](disabled)); got != "true,true,true" {
			t.Errorf("after the run (reload %v), controls disabled: %s; want all", reload, got)
		}
	}
	f.events.Publish(event.Event{Kind: event.Step, Text: "<- continuing in ~/proj", Payload: map[string]any{"banner": true, "wake": 2}})
	if err := chromedp.Do(ctx,
		chromedp.WaitNotVisible(chromedp.CSS(`#next`)),
		chromedp.Poll[chromedp.Void](`!document.getElementById('mail-send').disabled`),
	); err != nil {
		t.Fatalf("the next wake's banner does not turn the controls on: %v", err)
	}
}
