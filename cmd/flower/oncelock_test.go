package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/flower-run/flower/model/modeltest"
)

// TestOnceTakesTheWorkspaceLock: flower once works in a workspace like a
// wake (R9.6): while one once or wake holds the workspace, another once
// or wake there is refused in one line naming the holder, whether the run
// dir is ./runs or the default under the state directory.
func TestOnceTakesTheWorkspaceLock(t *testing.T) {
	_, def := defaultState(t)
	once := []string{"once", "say hi"}
	wake := args(testTask)
	tests := []struct {
		name          string
		first, second []string
		env           []string
	}{
		{"once then once", once, once, nil},
		{"once then once, default run dir", once, once, def},
		{"wake then once", wake, once, nil},
		{"once then wake", once, wake, nil},
		{"wake then once, default run dir", wake, once, def},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			held, release := make(chan struct{}), make(chan struct{})
			var holdOnce, releaseOnce sync.Once
			t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
			srv, env := fakeModelWith(t, func(r *modeltest.Request) modeltest.Turn {
				if stepOf(r.System) == "" {
					return modeltest.Turn{Text: "hi"} // flower once
				}
				return play(r)
			})
			srv.onRequest(func(*modeltest.Request) { holdOnce.Do(func() { close(held); <-release }) })
			env = append(env, tt.env...)
			dir := t.TempDir()
			a := startFlower(t, dir, env, false, tt.first...)
			select {
			case <-held:
			case <-a.done:
				t.Fatalf("the first ended early\n%s%s", a.stdout, a.stderr)
			}
			b := runFlower(t, dir, env, tt.second...)
			holder := fmt.Sprintf("pid %d", a.cmd.Process.Pid)
			if b.code != 1 || !strings.Contains(b.stderr, holder) || !strings.Contains(b.stderr, "flower ps") ||
				strings.Count(strings.TrimSpace(b.stderr), "\n") != 0 {
				t.Errorf("the second (%v): exit %d, want 1 and one line naming %s\nstdout:\n%s\nstderr:\n%s", tt.second, b.code, holder, b.stdout, b.stderr)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d model requests, want the first's one: the refused one called the model", n)
			}
			releaseOnce.Do(func() { close(release) })
			if r := a.wait(); r.code != 0 {
				t.Fatalf("the first: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}
