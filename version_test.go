package flower_test

import (
	"testing"

	"github.com/flower-run/flower"
)

// TestVersion: a program built from this module knows its version (a test
// binary is "(devel)", perhaps with its revision); moved from cmd/flower
// so front ends and embedders report the same (issue 19).
func TestVersion(t *testing.T) {
	if v := flower.Version(); v == "" || v == "unknown" {
		t.Errorf("Version() = %q", v)
	}
}
