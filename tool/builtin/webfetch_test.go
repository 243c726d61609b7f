package builtin

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const testPage = `<!DOCTYPE html>
<html><head><title>The  Title</title>
<style>body { color: red }</style>
<script type="text/javascript">var x = "<p>not text</p>";</script>
</head>
<body>
<!-- a comment -->
<h1>Welcome</h1>
<p>Hello,
   <b>world</b> &amp; friends&nbsp;!</p>
<ul><li>one</li><li>two</li></ul>
<SCRIPT>alert(1)</SCRIPT>
<pre>  indented
    code</pre>
</body></html>`

func fetchServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(testPage))
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("just <text>\n"))
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"a": 1}`))
	})
	mux.HandleFunc("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(strings.Repeat("a", MaxFetchBytes+100)))
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/plain", http.StatusFound)
	})
	mux.HandleFunc("/ua", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(r.UserAgent()))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestWebFetch(t *testing.T) {
	srv := fetchServer(t)
	env := Env{HTTPClient: srv.Client()}
	tests := []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"html", map[string]any{"url": srv.URL + "/page"}, "URL: " + srv.URL + "/page\nStatus: 200 OK\n\n" +
			"The Title\n\n# Welcome\n\nHello, world & friends !\n\n- one\n- two\n\n  indented\n    code"},
		{"prompt echoed", map[string]any{"url": srv.URL + "/plain", "prompt": "find\nthe text"},
			"URL: " + srv.URL + "/plain\nStatus: 200 OK\nPrompt: find the text\n\njust <text>\n"},
		{"json", map[string]any{"url": srv.URL + "/json"}, "URL: " + srv.URL + "/json\nStatus: 200 OK\n\n{\"a\": 1}"},
		{"redirect", map[string]any{"url": srv.URL + "/moved"}, "URL: " + srv.URL + "/plain\nStatus: 200 OK\n\njust <text>\n"},
		{"user agent", map[string]any{"url": srv.URL + "/ua"}, "URL: " + srv.URL + "/ua\nStatus: 200 OK\n\n" + userAgent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, &WebFetch{Env: env}, tt.input)
			if res.IsError || res.Content != tt.want {
				t.Errorf("got (error=%v)\n%q\nwant\n%q", res.IsError, res.Content, tt.want)
			}
		})
	}
}

func TestWebFetchCaps(t *testing.T) {
	srv := fetchServer(t)
	res := run(t, &WebFetch{Env: Env{HTTPClient: srv.Client(), OutputCap: 1000}}, map[string]any{"url": srv.URL + "/big"})
	wantOK(t, res, "only the first 2097152 bytes of the body were read", "more bytes not shown")
	if len(res.Content) > 1200 {
		t.Errorf("result is %d bytes, want about 1000", len(res.Content))
	}
}

func TestWebFetchErrors(t *testing.T) {
	srv := fetchServer(t)
	env := Env{HTTPClient: srv.Client()}
	tests := []struct {
		name, url, want string
	}{
		{"404", srv.URL + "/missing", "HTTP 404 Not Found"},
		{"binary", srv.URL + "/image", "image/png is binary"},
		{"file scheme", "file:///etc/passwd", "must start with http:// or https://"},
		{"no scheme", "example.com/x", "must start with http:// or https://"},
		{"no host", "http:///x", "has no host"},
		{"unreachable", "http://127.0.0.1:1/", "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, run(t, &WebFetch{Env: env}, map[string]any{"url": tt.url}), tt.want)
		})
	}
}

func TestHTMLToText(t *testing.T) {
	tests := []struct {
		name, html, want string
	}{
		{"plain", "hello", "hello"},
		{"entities", "a &lt;b&gt; &#39;c&#39;", "a <b> 'c'"},
		{"lone angle", "1 < 2 and 3 > 2", "1 < 2 and 3 > 2"},
		{"inline tags keep words apart", "<p>a<b>b</b> <i>c</i></p>", "ab c"},
		{"attributes with >", `<a title="x > y" href="/">link</a>`, "link"},
		{"comment", "a<!-- <p>hidden</p> -->b", "ab"},
		{"unclosed script", "a<script>var x", "a"},
		{"self-closing raw element", "a<svg/>b", "ab"},
		{"style dropped", "<style>p{}</style>text", "text"},
		{"breaks", "a<br>b<br/>c", "a\nb\nc"},
		{"headings", "<h2>Title</h2>body", "## Title\n\nbody"},
		{"table", "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>", "a b\nc"},
		{"blank lines collapse", "<p>a</p><p></p><div></div><p>b</p>", "a\n\nb"},
		{"pre keeps lines", "<pre>x\n  y</pre>", "x\n  y"},
		{"doctype", "<!DOCTYPE html><p>x</p>", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := htmlToText(tt.html); got != tt.want {
				t.Errorf("htmlToText(%q) = %q, want %q", tt.html, got, tt.want)
			}
		})
	}
}
