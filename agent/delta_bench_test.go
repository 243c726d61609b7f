package agent_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store/mem"
)

// What live output costs (issue 11): one turn whose 2 KB answer streams in
// 128 deltas, with no sink (no delta events are made) and with a sink that
// takes every event. Compare their ns/op from one run (BENCHMARKS.md).
func BenchmarkStreamedTurnNoSink(b *testing.B) { benchStreamedTurn(b, nil) }

func BenchmarkStreamedTurnSink(b *testing.B) {
	var n atomic.Int64
	benchStreamedTurn(b, func(e event.Event) {
		if e.Kind == event.Delta {
			n.Add(1)
		}
	})
	if n.Load() == 0 {
		b.Fatal("no delta events")
	}
}

func benchStreamedTurn(b *testing.B, sink event.Sink) {
	long := strings.Repeat("A line of a long answer, streamed.\n", 58) // 2,030 bytes
	srv := modeltest.NewAnthropic(func(*modeltest.Request) modeltest.Turn { return modeltest.Turn{Text: long} })
	defer srv.Close()
	rt, err := agent.New(agent.Options{Workspace: b.TempDir(), Store: mem.New(),
		Provider: anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL})})
	if err != nil {
		b.Fatal(err)
	}
	spec := agent.Spec{Model: "claude-sonnet-4-6"}
	cpu := cpuTime()
	for b.Loop() {
		res := rt.Run(context.Background(), spec, "Say a lot.", agent.RunOptions{Sink: sink})
		if !res.OK || res.Text != long {
			b.Fatalf("run: ok=%v error=%s", res.OK, res.Error)
		}
	}
	reportCPUPerOp(b, cpu)
}
