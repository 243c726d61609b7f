package flower_test

import (
	"context"
	"fmt"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/wake"
)

// Seed 004's minimal code in flower: the starter flow with a person's
// channel (asks wait 60 s), an event sink that draws, and an answerer that
// pulls questions. The channel is the Host's: Start wires it, its tools and
// the Sink in one place, with the workspace's workbench (docs/seeds.md).
func Example_starterFlowWithAPerson() {
	ws, runDir, done := tempDirs()
	defer done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	h, err := flower.Open(ctx, flower.Options{Workspace: ws, RunDir: runDir, Model: "demo"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	sink := func(e event.Event) {
		if e.Kind == event.Step {
			fmt.Printf("=== %s (%v/%v)\n", e.Text, e.Payload["index"], e.Payload["total"])
		}
	}
	err = h.Start(ctx, flower.StartOptions{Sink: sink, Human: &flower.HumanOptions{Timeout: 60 * time.Second}})
	if err != nil {
		fmt.Println(err)
		return
	}
	go func() { // the answerer: pull, answer
		for {
			a, err := h.Channel().NextAsk(ctx)
			if err != nil {
				return
			}
			h.Channel().Answer(a.ID, "as you judge best")
		}
	}()
	plan, err := h.Prepare(ctx, wake.Options{Phrase: "write a greeting file"})
	if err != nil {
		fmt.Println(err)
		return
	}
	out := h.Drive(ctx, plan, flower.DriveOptions{})
	fmt.Println("passed:", out.Passed)
	// Output:
	// === clarify (1/4)
	// === goals (2/4)
	// === work (3/4)
	// === work·judge#1 (4/4)
	// passed: true
}
