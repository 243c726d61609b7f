package main

import (
	"encoding/json"
	"io"
	"strings"
)

// plainEncoder is a JSON encoder that writes <, > and & as themselves:
// flower's JSON is read by people and scripts, never embedded in HTML.
func plainEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// htmlEscapes are the escapes encoding/json writes by default for <, > and &.
var htmlEscapes = map[string]string{`\u003c`: "<", `\u003e`: ">", `\u0026`: "&"}

// plainJSON is raw JSON with its \u003c, \u003e and \u0026 escapes turned
// back into characters, byte for byte otherwise (key order kept). An
// escaped backslash before "u003c" is left alone.
func plainJSON(raw []byte) string {
	s := string(raw)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+6 <= len(s) {
			if c, ok := htmlEscapes[strings.ToLower(s[i:i+6])]; ok {
				b.WriteString(c)
				i += 5
				continue
			}
		}
		if i+1 < len(s) { // any other escape, "\\" included, is copied whole
			b.WriteString(s[i : i+2])
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
