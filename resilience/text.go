package resilience

import (
	"strings"
	"unicode"
)

// words lowercases text and turns every run of non-alphanumerics into one
// space, with a space at each end, so "invalid x-api-key",
// "invalid_x_api_key" and "Invalid X-API-Key." all read " invalid x api key ".
func words(text string) string {
	var b strings.Builder
	b.WriteByte(' ')
	space := true
	for _, r := range strings.ToLower(text) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			space = false
			continue
		}
		if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	if !space {
		b.WriteByte(' ')
	}
	return b.String()
}

// phrases normalizes phrases like words, keeping only the leading space, so
// a match must start a word but may end inside one.
func phrases(ps ...string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strings.TrimSuffix(words(p), " ")
	}
	return out
}

// hasPhrase reports whether w, as made by words, holds any of ps, as made
// by phrases.
func hasPhrase(w string, ps []string) bool {
	for _, p := range ps {
		if strings.Contains(w, p) {
			return true
		}
	}
	return false
}

// statusIn returns the first standalone three-digit number from 100 to 599
// in text — where every error format we see puts the HTTP status
// ("anthropic: 529 …", `POST "…": 401 Unauthorized`, "OpenAI API error: 429
// …") — or 0. Tokens keep '.', ':' and '/' so that addresses and ports such
// as "127.0.0.1:404" are never taken for a status.
func statusIn(text string) int {
	tokens := strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._:/-", r))
	})
	for _, t := range tokens {
		t = strings.TrimRight(t, ".:")
		if len(t) != 3 || strings.Trim(t, "0123456789") != "" {
			continue
		}
		if n := int(t[0]-'0')*100 + int(t[1]-'0')*10 + int(t[2]-'0'); n >= 100 && n <= 599 {
			return n
		}
	}
	return 0
}
