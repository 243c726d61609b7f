package web

import (
	"path/filepath"
	"testing"

	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/store/mem"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/sqlite"
)

// TestPollOf: a run on a store that cannot notify reads its journal four
// times a second, so an answer given through another process is seen
// within a quarter second, not two; one on PostgreSQL, nudged on every
// record, polls only to back up a lost notification.
func TestPollOf(t *testing.T) {
	lite, err := sqlite.Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	if got := pollOf(lite); got != localPoll || localPoll > human.DefaultPoll/4 {
		t.Errorf("SQLite polls every %v, want %v", got, localPoll)
	}
	if got := pollOf(mem.New()); got != localPoll {
		t.Errorf("mem polls every %v, want %v", got, localPoll)
	}
	if got := pollOf(&postgres.DB{}); got != human.DefaultPoll {
		t.Errorf("PostgreSQL polls every %v, want %v", got, human.DefaultPoll)
	}
}
