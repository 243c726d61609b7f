package event_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/flower-run/flower/event"
)

// BenchmarkPublish measures Publish to n live subscribers that drain their
// feeds, with one more subscriber that never reads (so every event is a
// drop for it): the cost a run pays per event, whatever its front ends do.
func BenchmarkPublish(b *testing.B) {
	e := event.Event{Kind: event.Text, Text: "the model said something",
		Payload: map[string]any{"context": 12345, "window": 200000}}
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("subscribers=%d+stalled", n), func(b *testing.B) {
			br := event.NewBroker(0)
			ctx, cancel := context.WithCancel(context.Background())
			stalled := br.Subscribe(ctx, "stalled", 16)
			done := make(chan struct{}, n)
			live := make([]*event.Subscription, n)
			for i := range n {
				s := br.Subscribe(ctx, fmt.Sprint("live", i), event.DefaultBuffer)
				live[i] = s
				go func() {
					for range s.C {
					}
					done <- struct{}{}
				}()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				br.Publish(e)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(stalled.Dropped())/float64(b.N), "stalled-drops/event")
			var liveDrops int64
			for _, s := range live {
				liveDrops += s.Dropped()
			}
			// Live subscribers drop too when the publisher outruns them on
			// few cores: the price of never blocking.
			b.ReportMetric(float64(liveDrops)/float64(b.N*n), "live-drop-ratio")
			cancel()
			for range n {
				<-done
			}
		})
	}
}
