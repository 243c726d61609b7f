package model

import "testing"

func TestUSD(t *testing.T) {
	for x, want := range map[float64]string{
		0: "$0.00", 0.003: "$0.003", 0.0012346: "$0.001235", 0.00001: "$0.00001",
		0.5: "$0.50", 0.1234: "$0.1234", 0.01: "$0.01", 2.5: "$2.50", 12.345: "$12.35", -0.003: "-$0.003",
	} {
		if got := USD(x); got != want {
			t.Errorf("USD(%v) = %s, want %s", x, got, want)
		}
	}
}
