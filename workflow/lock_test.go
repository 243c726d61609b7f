package workflow

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLockRefusesASecondDriver(t *testing.T) { // DESIGN §3.6
	dir := t.TempDir()
	unlock, err := Lock(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(dir, time.Now())
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second Lock: %v", err)
	}
	if o, live := Holder(dir); !live || o.PID != os.Getpid() {
		t.Fatalf("holder %+v live=%v", o, live)
	}
	unlock()
	if _, live := Holder(dir); live {
		t.Fatal("lock still held after unlock")
	}
	unlock2, err := Lock(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	unlock2()
}

func TestDiscardAndReset(t *testing.T) { // R5.6
	dir := t.TempDir()
	st := newState(dir, "20261130-000000-abcdef", "")
	st.Step = "work"
	if err := st.save(); err != nil {
		t.Fatal(err)
	}
	runs := Runs(dir)
	if len(runs) != 1 || runs[0].Status != StatusRunning || runs[0].Step != "work" {
		t.Fatalf("Runs = %+v", runs)
	}
	if err := Discard(dir, "nope"); err == nil {
		t.Fatal("discarding an unknown run succeeded")
	}
	if err := Discard(dir, st.Run); err != nil {
		t.Fatal(err)
	}
	if got, _ := loadState(dir); got.Status != StatusDiscarded {
		t.Fatalf("status %q after discard", got.Status)
	}
	if err := Reset(dir); err != nil || len(Runs(dir)) != 0 {
		t.Fatalf("reset: %v, runs %+v", err, Runs(dir))
	}
}
