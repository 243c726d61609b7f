package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/flower-run/flower/store/postgres/pgtest"
)

// TestNotifyReachesAListener: a notification sent by one store (another
// process's pool) reaches the listener of another, after the listener
// said it listens; a connection the server ends is made again, and said
// with an empty payload, so the caller looks for what it missed.
func TestNotifyReachesAListener(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := pgtest.URL(t)
	a, b := openAt(t, url), openAt(t, url)
	channel := fmt.Sprintf("flower_test_%d", time.Now().UnixNano())
	got := make(chan string, 16)
	lctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Listen(lctx, channel, func(p string) { got <- p })
	}()
	next := func() string {
		t.Helper()
		select {
		case p := <-got:
			return p
		case <-ctx.Done():
			t.Fatal("no notification")
			return ""
		}
	}
	if p := next(); p != "" {
		t.Fatalf("first call = %q, want the empty payload of a listening connection", p)
	}
	if err := b.Notify(ctx, channel, "-ws/~human"); err != nil {
		t.Fatal(err)
	}
	if p := next(); p != "-ws/~human" {
		t.Fatalf("payload = %q", p)
	}
	pgtest.Exec(t, url, fmt.Sprintf(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = 'flower listen' AND query = 'LISTEN "%s"'`, channel))
	if p := next(); p != "" {
		t.Fatalf("after the connection was ended: %q, want the empty payload of a new one", p)
	}
	if err := b.Notify(ctx, channel, "again"); err != nil {
		t.Fatal(err)
	}
	if p := next(); p != "again" {
		t.Fatalf("payload after reconnecting = %q", p)
	}
	stop()
	<-done
}
