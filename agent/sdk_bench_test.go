package agent_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/mem"
	"github.com/flower-run/flower/store/sqlite"
)

// The two benchmarks below answer SPEC issue 2d: how much a whole agent
// turn costs over a bare SDK call, both against the same fake Anthropic
// server on loopback answering a short text turn. Compare their ns/op
// from one run (BENCHMARKS.md).

// hello answers every request with the same short text turn.
func hello(*modeltest.Request) modeltest.Turn {
	return modeltest.Turn{Text: "Hello! How can I help you today?"}
}

// BenchmarkSDKCall is the floor: one streamed call with the official SDK,
// accumulated into a message, nothing else.
func BenchmarkSDKCall(b *testing.B) {
	srv := modeltest.NewAnthropic(hello)
	defer srv.Close()
	client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("k"), option.WithMaxRetries(0))
	params := sdk.MessageNewParams{Model: "claude-sonnet-4-6", MaxTokens: 1024,
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("Say hello."))}}
	ctx := context.Background()
	cpu := cpuTime()
	for b.Loop() {
		stream := client.Messages.NewStreaming(ctx, params)
		var msg sdk.Message
		for stream.Next() {
			if err := msg.Accumulate(stream.Current()); err != nil {
				b.Fatal(err)
			}
		}
		if err := stream.Err(); err != nil {
			b.Fatal(err)
		}
		stream.Close()
		if len(msg.Content) != 1 || msg.Content[0].Text == "" {
			b.Fatalf("answer: %+v", msg.Content)
		}
	}
	reportCPUPerOp(b, cpu)
}

// BenchmarkAgentTurn is a whole `flower once` turn minus process start:
// agent.Runtime.Run of a new session with the built-in tools offered,
// through the model/anthropic adapter, on real SQLite. It makes the
// session's meta, the prompt and the response durable (three fsync'd
// commits) around one model call.
func BenchmarkAgentTurn(b *testing.B) {
	db, err := sqlite.Open(filepath.Join(b.TempDir(), "sessions.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	benchAgentTurn(b, db)
}

// BenchmarkAgentTurnMem is BenchmarkAgentTurn on store/mem: the same turn
// without the disk, to split the ratio into fsyncs and the rest.
func BenchmarkAgentTurnMem(b *testing.B) { benchAgentTurn(b, mem.New()) }

func benchAgentTurn(b *testing.B, st store.Store) {
	srv := modeltest.NewAnthropic(hello)
	defer srv.Close()
	rt, err := agent.New(agent.Options{Workspace: b.TempDir(), Store: st,
		Provider: anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL})})
	if err != nil {
		b.Fatal(err)
	}
	spec := agent.Spec{Model: "claude-sonnet-4-6"}
	ctx := context.Background()
	cpu := cpuTime()
	for b.Loop() {
		res := rt.Run(ctx, spec, "Say hello.", agent.RunOptions{})
		if !res.OK || res.Turns != 1 || res.Text == "" {
			b.Fatalf("run: ok=%v turns=%d text=%q error=%s", res.OK, res.Turns, res.Text, res.Error)
		}
	}
	reportCPUPerOp(b, cpu)
}

func reportCPUPerOp(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}
