package agent_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/resilience"
	"github.com/flower-run/flower/resilience/clocktest"
)

// retryFixture is a fixture whose retries wait on a fake clock that a
// goroutine advances whenever the runtime waits: no test sleeps.
func retryFixture(t *testing.T, probe func(context.Context) bool, turns ...modeltest.Turn) (*fixture, *clocktest.Fake) {
	t.Helper()
	f := newFixture(t, modeltest.Script(turns...))
	clock := clocktest.New(time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC))
	f.rt = f.runtimeWith(agent.Options{Retry: resilience.Retrier{Clock: clock, Probe: probe,
		Rand: func() float64 { return 0.5 }}})
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for {
			select {
			case <-clock.Waiting(1):
				clock.AdvanceNext()
			case <-done:
				return
			}
		}
	}()
	return f, clock
}

func TestTransientFaultsAreRetriedCleanly(t *testing.T) { // R4.3, R4.5, issue 5 faults
	faults := []*modeltest.Fault{
		{Status: 529}, {Status: 429, RetryAfter: "7"}, {CutAfterStart: true}, {StreamError: true}, {Status: 500},
	}
	var turns []modeltest.Turn
	for _, fl := range faults {
		turns = append(turns, modeltest.Turn{Fault: fl})
	}
	turns = append(turns, modeltest.Turn{Text: "made it"})
	f, _ := retryFixture(t, nil, turns...)
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if !res.OK || res.Text != "made it" || res.Attempts != 6 || len(res.Errors) != 5 {
		t.Fatalf("result = %+v", res)
	}
	for _, r := range f.srv.Requests() {
		body := string(r.Body)
		for _, bad := range []string{"verloaded", "overloaded_error", "rate_limit", "stream ended", "api_error"} {
			if strings.Contains(body, bad) {
				t.Fatalf("request %d carries error text %q", r.N, bad)
			}
		}
		if len(r.Messages) != 1 {
			t.Fatalf("request %d has %d messages: a partial answer leaked", r.N, len(r.Messages))
		}
	}
	if got := len(f.eventLines(event.Retry)); got != 5 {
		t.Fatalf("%d retry events, want 5", got)
	}
}

func TestAuthErrorStopsAtOnce(t *testing.T) { // R4.2: fatal first, never waited on
	f, clock := retryFixture(t, nil, modeltest.Turn{Fault: &modeltest.Fault{Status: 401,
		Message: "invalid x-api-key (connection refused)"}})
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if res.OK || f.srv.Count() != 1 || !strings.Contains(res.Error, "401") || strings.Contains(res.Error, "\n") {
		t.Fatalf("result = %+v after %d requests", res, f.srv.Count())
	}
	if clock.Pending() != 0 || len(f.eventLines(event.Retry)) != 0 {
		t.Fatal("a 401 was waited on")
	}
}

func TestTenMinutesOfflineIsWaitedOut(t *testing.T) { // R4.3: offline waits spend no attempts
	var probes atomic.Int32
	clockRef := new(*clocktest.Fake)
	start := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	probe := func(context.Context) bool {
		probes.Add(1)
		return (*clockRef).Now().Sub(start) >= 10*time.Minute
	}
	f, clock := retryFixture(t, probe, modeltest.Turn{Fault: &modeltest.Fault{CutAfterStart: true}},
		modeltest.Turn{Text: "back online"})
	*clockRef = clock
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if !res.OK || res.Attempts != 2 || f.srv.Count() != 2 {
		t.Fatalf("result = %+v after %d requests", res, f.srv.Count())
	}
	if got := clock.Now().Sub(start); got < 10*time.Minute {
		t.Fatalf("resumed after %v of fake time", got)
	}
	if n := len(f.eventLines(event.Retry)); n < 40 {
		t.Fatalf("%d offline notices, want one per 15 s probe", n)
	}
}

// An interrupt while the run waits for the network cuts no answer: none
// was streaming, so the interrupt must not say tokens were paid (issue 23).
func TestInterruptWhileOfflineCutsNothing(t *testing.T) {
	var f *fixture
	probe := func(context.Context) bool {
		f.rt.Interrupt("") // the person presses Ctrl-C while flower probes
		return false
	}
	f, _ = retryFixture(t, probe, modeltest.Turn{Fault: &modeltest.Fault{CutAfterStart: true}}, modeltest.Turn{Text: "never"})
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if res.OK || f.srv.Count() != 1 {
		t.Fatalf("result = %+v after %d requests", res, f.srv.Count())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var interrupts, cut int
	for _, e := range f.events {
		if e.Kind == event.Interrupt {
			interrupts++
			if e.Payload["model_cut"] == true {
				cut++
			}
		}
	}
	if interrupts != 1 || cut != 0 {
		t.Errorf("%d interrupt events, %d saying an answer was cut; want 1 and 0", interrupts, cut)
	}
}

// TestRetriedRunIsResumed: a run whose model call failed and was retried
// in the same session says resumed, as seed 000's row of a dropped network
// does (attempts=2, resumed=true); a run without a retry does not.
func TestRetriedRunIsResumed(t *testing.T) { // issue 22 item 5, R3.4
	f, _ := retryFixture(t, nil, modeltest.Turn{Fault: &modeltest.Fault{Status: 529}}, modeltest.Turn{Text: "made it"},
		modeltest.Turn{Text: "again"})
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if !res.OK || res.Attempts != 2 || !res.Resumed {
		t.Errorf("a retried run: attempts %d resumed %v (%+v), want 2 and true", res.Attempts, res.Resumed, res)
	}
	if res := f.run(agent.Spec{}, "go", agent.RunOptions{}); !res.OK || res.Attempts != 1 || res.Resumed {
		t.Errorf("a run without a retry: attempts %d resumed %v, want 1 and false", res.Attempts, res.Resumed)
	}
}
