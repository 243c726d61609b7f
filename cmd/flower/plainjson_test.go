package main

import (
	"bytes"
	"testing"
)

func TestPlainJSONShowsRealCharacters(t *testing.T) {
	for in, want := range map[string]string{
		`{"command":"echo a \u003e b \u0026\u0026 cat \u003cin"}`: `{"command":"echo a > b && cat <in"}`,
		`{"s":"\\u003e stays"}`:                                   `{"s":"\\u003e stays"}`,
		`{"s":"\\\u003e"}`:                                        `{"s":"\\>"}`,
		`{"q":"say \"hi\""}`:                                      `{"q":"say \"hi\""}`,
	} {
		if got := plainJSON([]byte(in)); got != want {
			t.Errorf("plainJSON(%s) = %s, want %s", in, got, want)
		}
	}
	var b bytes.Buffer
	plainEncoder(&b).Encode(map[string]string{"c": "a > b"})
	if b.String() != "{\"c\":\"a > b\"}\n" {
		t.Errorf("encoder wrote %q", b.String())
	}
}
