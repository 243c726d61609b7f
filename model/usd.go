package model

import (
	"math"
	"strconv"
	"strings"
)

// USD formats an amount of dollars for a person: cents from $1 up, four
// decimals below, and four significant digits below $0.01, so that a
// $0.003 budget never reads $0.00. Trailing zeros past the cents are
// dropped: $0.50, $0.1234, $0.003.
func USD(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "$" + strconv.FormatFloat(x, 'f', -1, 64)
	}
	sign := ""
	if x < 0 {
		sign, x = "-", -x
	}
	decimals := 2
	switch {
	case x == 0 || x >= 1:
	case x >= 0.01:
		decimals = 4
	default:
		decimals = 3 - int(math.Floor(math.Log10(x)))
	}
	s := strconv.FormatFloat(x, 'f', decimals, 64)
	if dot := strings.IndexByte(s, '.'); dot >= 0 {
		for len(s) > dot+3 && s[len(s)-1] == '0' {
			s = s[:len(s)-1]
		}
	}
	return sign + "$" + s
}
