package human

import "time"

// Clock is the channel's time source: when an ask was made, when it times
// out, when mail arrived. Injected so tests never sleep (DESIGN.md §3.5).
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// After relies on Go 1.23+ timers being collected once unreferenced, so a
// question answered long before its timeout leaves nothing behind.
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
