package main

import (
	"bytes"
	"testing"
)

func TestPlainEncoderShowsRealCharacters(t *testing.T) {
	var b bytes.Buffer
	plainEncoder(&b).Encode(map[string]string{"c": "a > b"})
	if b.String() != "{\"c\":\"a > b\"}\n" {
		t.Errorf("encoder wrote %q", b.String())
	}
}
