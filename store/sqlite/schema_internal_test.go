package sqlite

import (
	"testing"

	"github.com/flower-run/flower/store"
)

// TestMigrationsMatchVersion: a SchemaVersion bump comes with its
// migration and the tables of the new version.
func TestMigrationsMatchVersion(t *testing.T) {
	if len(migrations) != store.SchemaVersion || len(tables) != store.SchemaVersion+1 {
		t.Fatalf("%d migrations and tables of %d versions for SchemaVersion %d: want %d and %d",
			len(migrations), len(tables), store.SchemaVersion, store.SchemaVersion, store.SchemaVersion+1)
	}
}
