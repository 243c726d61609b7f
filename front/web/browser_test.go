package web_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flower-run/flower/event"
)

// chromium is Debian's browser; .ci/run installs it. Without it the test is
// skipped on a developer's machine and fails on CI.
const chromium = "/usr/bin/chromium"

// browser starts a headless Chromium and returns a context to drive it.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := exec.LookPath(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing on CI: .ci/run must install it (apt-get install chromium)", chromium)
		}
		t.Skipf("%s is not installed (apt-get install chromium): the page is not tested", chromium)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1440, 960),
	)
	// The bound fails a broken test instead of hanging it; no step waits
	// for it when things work.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", chromium, err)
	}
	return bctx
}

// The page in a real browser: it loads with the token from its address,
// streams the run's events, shows the agent's question with its options,
// and a click on an option answers it, after which the run goes on.
func TestPageAnswersAQuestionInARealBrowser(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := browser(t)
	f.events.Publish(event.Event{Kind: event.Step, Text: "<- continuing in ~/proj  brief confirmed · 3 goals · wake 2",
		Payload: map[string]any{"banner": true, "wake": 2, "workspace": "~/proj"}})
	// The step event as the engine sends it: the name as text, the title line
	// in the payload (seed 004); the page shows the title line.
	f.events.Publish(event.Event{Kind: event.Step, Text: "work",
		Payload: map[string]any{"step": "work", "n": 3, "index": 3, "total": 4, "connected": true, "header": "── 3/4 work (connected)"}})

	if err := chromedp.Do(ctx,
		chromedp.Navigate(f.srv.URL+"/?token="+token),
		chromedp.WaitVisible(chromedp.CSS(`#status[data-state="live"]`)),
		chromedp.WaitVisible(chromedp.Search(`//div[contains(@class,"ev step") and contains(., "3/4 work")]`)),
	); err != nil {
		t.Fatalf("load the page: %v", err)
	}
	wake, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#fact-wake`)))
	step, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#fact-step`)))
	if wake != "2" || !strings.Contains(step, "3/4 work") {
		t.Errorf("banner facts: wake %q, step %q", wake, step)
	}

	_, done := f.agentRun(askThenEcho, "make a header")
	blue := chromedp.CSS(`[data-ask-id="q1"] button[data-option="blue"]`)
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(blue),
		chromedp.WaitVisible(chromedp.Search(`//div[contains(@class,"ev question") and contains(., "Which colour")]`)),
	); err != nil {
		t.Fatalf("the question is not shown: %v", err)
	}
	level, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#fact-context`)))
	if !strings.Contains(level, "of") {
		t.Errorf("context level %q: want the level and the window", level)
	}
	screenshot(t, ctx)

	if err := chromedp.Do(ctx, chromedp.Click(blue)); err != nil {
		t.Fatalf("click: %v", err)
	}
	res := result(t, done)
	if !res.OK || !strings.Contains(res.Text, "blue") {
		t.Fatalf("the run did not go on with the answer: %v %q %s", res.OK, res.Text, res.Error)
	}
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.Search(`//div[contains(@class,"ev done")]`)),
		chromedp.WaitVisible(chromedp.Search(`//div[contains(@class,"ev text") and contains(., "The answer was")]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`[data-ask-id="q1"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#asks-empty`)),
	); err != nil {
		t.Fatalf("the page did not follow the run: %v", err)
	}
}

// The inbox box sends mail, and the interrupt button asks for a second
// click that says what is lost before it interrupts.
func TestPageSendsMailAndInterrupts(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := browser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(f.srv.URL+"/?token="+token),
		chromedp.WaitVisible(chromedp.CSS(`#status[data-state="live"]`)),
		chromedp.SendKeys(chromedp.CSS(`#mail`), "also count the bytes"),
		chromedp.Click(chromedp.CSS(`#mail-send`)),
		chromedp.WaitVisible(chromedp.Search(`//div[contains(@class,"ev mail") and contains(., "also count the bytes")]`)),
	); err != nil {
		t.Fatalf("mail: %v", err)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#interrupt-text`), "use tabs"),
		chromedp.Click(chromedp.CSS(`#interrupt`)),
	); err != nil {
		t.Fatal(err)
	}
	armed, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#interrupt`)))
	f.mu.Lock()
	early := len(f.interrupts)
	f.mu.Unlock()
	if early != 0 || !strings.Contains(armed, "lost") {
		t.Fatalf("first click: %d interrupts, button %q; want none yet and a warning", early, armed)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#interrupt`)),
		chromedp.WaitVisible(chromedp.Search(`//span[@id="interrupt-feedback" and contains(., "Stopping")]`)),
	); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.Join(f.interrupts, "|") != "use tabs" {
		t.Errorf("interrupts %q", f.interrupts)
	}
}

// screenshot saves the page to $FLOWER_SCREENSHOT, when set, to look at.
func screenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	path := os.Getenv("FLOWER_SCREENSHOT")
	if path == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
