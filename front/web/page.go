package web

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"net/http"
	"strings"
)

// The page is one HTML file; its style and script live beside it to be
// read and edited as what they are, and are inlined when the server starts.
// No build step.
var (
	//go:embed page.html
	pageHTML string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
)

// page returns the page with its style and script inlined, and a
// Content-Security-Policy that allows exactly those two and connections to
// this server: nothing else loads, runs or leaves.
func page() ([]byte, string) {
	html := strings.Replace(pageHTML, "/*STYLE*/", pageCSS, 1)
	html = strings.Replace(html, "/*SCRIPT*/", pageJS, 1)
	csp := "default-src 'none'; script-src " + hash(pageJS) + "; style-src " + hash(pageCSS) +
		"; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	return []byte(html), csp
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
}

// servePage serves the page. It holds no data of the run (everything comes
// over the API, with the token), so it is served without a token too: the
// page keeps the token it was opened with in the tab's sessionStorage and
// takes it out of the address bar, so a reload still works and the token
// stays out of the history (issue 11). A wrong token is refused.
func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	if (tok != "" && !s.matches(tok)) || (r.Header.Get("Authorization") != "" && !s.authorized(r)) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte("flower: open the address flower printed at start; it ends with ?token=...\n"))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", s.csp)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	w.Write(s.page)
}
