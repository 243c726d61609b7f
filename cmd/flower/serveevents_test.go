package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/flower-run/flower/store/postgres/pgtest"
)

type eventsPage struct {
	Events []struct {
		Seq  int    `json:"seq"`
		Kind string `json:"kind"`
		Text string `json:"text"`
	} `json:"events"`
	Gap bool `json:"gap"`
}

func (c *client) eventsAfter(after int) eventsPage {
	c.t.Helper()
	code, body := c.do("GET", fmt.Sprintf("/events?after=%d", after), "", c.token)
	var p eventsPage
	if err := json.Unmarshal([]byte(body), &p); code != http.StatusOK || err != nil {
		c.t.Fatalf("GET /events?after=%d: %d %s", after, code, body)
	}
	return p
}

// A page watching flower serve resumes after flower serve restarts mid-run
// (issue 14): the new process numbers its events on from the stored
// stream, so GET /events?after=<the page's last seq> answers the new
// events with no gap, and after=0 still has every event of the first
// process, with the seqs the page saw.
func TestServeResumesEventsAfterARestart(t *testing.T) {
	serveResumes(t, nil)
}

// The same with the store on PostgreSQL.
func TestServeResumesEventsAfterARestartPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("long: two flower serve processes on PostgreSQL")
	}
	serveResumes(t, []string{"FLOWER_STORE=" + pgtest.URL(t)})
}

func serveResumes(t *testing.T, env []string) {
	dir := t.TempDir()
	srv := serveModel(t)
	one := startServing(t, dir, serveEnv(srv, env...), "serve", "make a header")
	m := one.waitOutput(servedURL)
	c := &client{t: t, base: m[1], token: m[2]}
	c.events(bounded(t), asked)
	seen := c.eventsAfter(0)
	if len(seen.Events) == 0 || seen.Gap {
		t.Fatalf("first process: %+v", seen)
	}
	last := seen.Events[len(seen.Events)-1].Seq
	one.cmd.Process.Signal(os.Interrupt)
	one.waitOutput(runEnded) // serve stays up after the run (issue 11): Ctrl-C again exits
	one.cmd.Process.Signal(os.Interrupt)
	if code := one.wait(); code != exitInterrupted {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, one.stdout, one.stderr)
	}

	two := startServing(t, dir, serveEnv(srv, env...), "serve")
	m = two.waitOutput(servedURL)
	c = &client{t: t, base: m[1], token: m[2]}
	c.events(bounded(t), asked)
	next := c.eventsAfter(last)
	// What the first process published after the page's last look (its
	// shutdown: the ask declined, the result) comes first, from the store,
	// then the second process's banner, numbered past the end mark.
	if next.Gap || len(next.Events) == 0 || next.Events[0].Seq != last+1 {
		t.Fatalf("after=%d on the restarted serve: %+v; want the events from %d, no gap", last, next, last+1)
	}
	banner := false
	for i, e := range next.Events {
		banner = banner || (e.Kind == "step" && strings.Contains(e.Text, "wake 2"))
		if i > 0 && e.Seq <= next.Events[i-1].Seq {
			t.Errorf("events out of order: %+v", next.Events)
		}
	}
	if !banner {
		t.Errorf("no banner of the second wake after %d: %+v", last, next.Events)
	}
	all := c.eventsAfter(0)
	// Deltas (text as it streams, issue 11) are live only, never stored:
	// the restarted serve has every other event, with the seqs seen.
	stored := seen.Events[:0:0]
	for _, e := range seen.Events {
		if e.Kind != "delta" {
			stored = append(stored, e)
		}
	}
	seen.Events = stored
	if all.Gap || len(all.Events) < len(seen.Events)+len(next.Events) {
		t.Fatalf("after=0 on the restarted serve: %d events (gap %v); want the %d of the first process and the %d since",
			len(all.Events), all.Gap, len(seen.Events), len(next.Events))
	}
	for i, e := range seen.Events {
		if all.Events[i] != e {
			t.Errorf("event %d: %+v after the restart, %+v before", i, all.Events[i], e)
		}
	}
	two.cmd.Process.Signal(os.Interrupt)
	two.waitOutput(runEnded)
	two.cmd.Process.Signal(os.Interrupt)
	if code := two.wait(); code != exitInterrupted {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, two.stdout, two.stderr)
	}
}
