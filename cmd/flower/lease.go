package main

import (
	"fmt"
	"time"

	"github.com/flower-run/flower/store"
)

// heartbeat is ", heartbeat 3s ago" for a lease that has one.
func heartbeat(h store.Holder) string {
	if h.Heartbeat.IsZero() {
		return ""
	}
	return fmt.Sprintf(", heartbeat %s ago", time.Since(h.Heartbeat).Round(time.Second))
}
