package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// wholeReads is the workspace's SQLite store, counting the results it
// reads whole after a LoadHeads.
type wholeReads struct {
	*sqlite.DB
	n atomic.Int32
}

func (w *wholeReads) ResultContent(ctx context.Context, key string, seq int64) (string, bool, error) {
	w.n.Add(1)
	return w.DB.ResultContent(ctx, key, seq)
}

// loadOnly hides store.Heads: a wake loads every result whole.
type loadOnly struct{ store.Store }

// headsScript makes three large results and a small one, then answers.
func headsScript() modeltest.Responder {
	return modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Bash", `{"command":"seq 1 3000"}`),
			call("Bash", `{"command":"seq 5 4000"}`), call("Bash", `{"command":"seq 1 20"}`)}},
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Bash", `{"command":"printf 'é%.0s' $(seq 1 3000)"}`)}},
		modeltest.Turn{Text: "counted"},
		modeltest.Turn{Text: "again"},
		modeltest.Turn{Text: "and again"},
		modeltest.Turn{Text: "once more"},
	)
}

// TestWakeLoadsHeads: a wake with trimming on loads its large results as
// heads (store.Heads) and sends the very request a wake that loads them
// whole sends; the spill files it writes hold the whole results, read from
// the store only for the files it had to write; a later wake, the files
// synced and listed, reads no result whole.
func TestWakeLoadsHeads(t *testing.T) {
	var bodies []string
	var heads *wholeReads
	var fs []*fixture
	for _, hide := range []bool{true, false} {
		f := newFixture(t, headsScript())
		first := f.run(agent.Spec{}, "count", agent.RunOptions{})
		db := openStore(t, f.ws).(*sqlite.DB)
		var st store.Store = loadOnly{db}
		if !hide {
			heads = &wholeReads{DB: db}
			st = heads
		}
		f.rt = f.runtimeWith(agent.Options{Trim: true, Store: st})
		if res := f.run(agent.Spec{}, "and now?", agent.RunOptions{Resume: first.SessionID}); !res.OK {
			t.Fatalf("wake = %+v", res)
		}
		reqs := f.srv.Requests()
		// Each fake server numbers its tool ids on from the last one's.
		bodies = append(bodies, toolIDs.ReplaceAllString(strings.ReplaceAll(string(reqs[len(reqs)-1].Body), f.ws, "WS"), "toolu_N"))
		fs = append(fs, f)
		if hide {
			continue
		}
		if n := heads.n.Load(); n != 3 {
			t.Errorf("the first wake read %d results whole, want the 3 it spilled", n)
		}
		f.rt = f.runtimeWith(agent.Options{Trim: true, Store: heads})
		if res := f.run(agent.Spec{}, "again?", agent.RunOptions{Resume: first.SessionID}); !res.OK {
			t.Fatalf("second wake = %+v", res)
		}
		if n := heads.n.Load(); n != 3 {
			t.Errorf("a later wake read %d results whole, want none", n-3)
		}
		files, _ := filepath.Glob(filepath.Join(f.ws, ".flower", "results", "*.txt"))
		if len(files) == 0 {
			t.Fatal("no spill files")
		}
		lost, _ := os.ReadFile(files[0])
		if err := os.Remove(files[0]); err != nil { // someone cleaned up: the file goes missing
			t.Fatal(err)
		}
		f.rt = f.runtimeWith(agent.Options{Trim: true, Store: heads})
		if res := f.run(agent.Spec{}, "and?", agent.RunOptions{Resume: first.SessionID}); !res.OK {
			t.Fatalf("third wake = %+v", res)
		}
		// Writing it again drops the .sealed list (unseal), so the other
		// files are checked against the store too: one whole read each.
		if again, _ := os.ReadFile(files[0]); heads.n.Load() != 6 || string(again) != string(lost) {
			t.Errorf("a missing spill file: %d whole reads (want 3), written again whole: %v", heads.n.Load()-3, string(again) == string(lost))
		}
	}
	if bodies[0] != bodies[1] {
		t.Fatalf("the wake's request differs with heads:\nwhole %.2000s\nheads %.2000s", bodies[0], bodies[1])
	}
	if !strings.Contains(bodies[1], "[trimmed: this result was") {
		t.Fatal("nothing trimmed: the test shows nothing")
	}
	spilled := func(f *fixture) []string {
		files, _ := filepath.Glob(filepath.Join(f.ws, ".flower", "results", "*.txt"))
		var out []string
		for _, p := range files {
			data, _ := os.ReadFile(p)
			out = append(out, string(data))
		}
		sort.Strings(out)
		return out
	}
	whole, got := spilled(fs[0]), spilled(fs[1])
	if len(whole) != 3 || len(got) != len(whole) {
		t.Fatalf("spilled %d files with heads, %d whole; want 3", len(got), len(whole))
	}
	for i := range whole {
		if got[i] != whole[i] {
			t.Errorf("spill file %d: %d bytes with heads, %d whole", i, len(got[i]), len(whole[i]))
		}
	}
}

var toolIDs = regexp.MustCompile(`toolu_fake[0-9]+`)

// TestForkLoadsWhole: a fork copies its session, so it loads every result
// whole even with trimming on; the copy's results are whole in the store.
func TestForkLoadsWhole(t *testing.T) {
	f := newFixture(t, headsScript())
	first := f.run(agent.Spec{}, "count", agent.RunOptions{})
	f.rt = f.runtimeWith(agent.Options{Trim: true})
	fork := f.run(agent.Spec{}, "forked", agent.RunOptions{Resume: first.SessionID, Fork: true})
	if !fork.OK {
		t.Fatalf("fork = %+v", fork)
	}
	db := openStore(t, f.ws)
	orig, err := db.Load(context.Background(), store.SessionKey(f.ws, first.SessionID))
	if err != nil {
		t.Fatal(err)
	}
	copied, err := db.Load(context.Background(), store.SessionKey(f.ws, fork.SessionID))
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range orig {
		if e.Op != nil && (copied[i].Op == nil || copied[i].Op.Content != e.Op.Content) {
			t.Fatalf("entry %d of the fork lost its content", i)
		}
	}
}
