package builtin

import (
	"html"
	"regexp"
	"strings"
)

// htmlToText turns an HTML page into readable plain text. It is a tag
// stripper, not a parser: it drops scripts, styles and comments, turns
// block elements into line breaks and headings into "#" lines, keeps <pre>
// as is, decodes entities and collapses the rest of the whitespace. That is
// enough for a model to read a page, without a dependency.
func htmlToText(s string) string {
	c := htmlConv{src: s}
	for c.pos < len(s) {
		if s[c.pos] == '<' {
			c.tag()
		} else {
			c.text()
		}
	}
	return tidyText(c.out.String())
}

type htmlConv struct {
	src string
	pos int
	out strings.Builder
	pre int // depth of open <pre> elements
}

// rawElements have content that is not text to read.
var rawElements = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true,
	"svg": true, "iframe": true, "object": true, "canvas": true,
}

// blockBreaks is how many line breaks a block element's tag (opening or
// closing) ensures before what follows: 1 starts a new line, 2 leaves a
// blank line, as between paragraphs.
var blockBreaks = map[string]int{
	"p": 2, "div": 1, "hr": 2, "tr": 1, "li": 1, "ul": 2, "ol": 2, "dl": 2,
	"table": 2, "section": 2, "article": 2, "header": 2, "footer": 2, "nav": 2,
	"main": 2, "aside": 2, "blockquote": 2, "pre": 2, "title": 2, "dt": 1,
	"dd": 1, "figure": 2, "form": 2, "h1": 2, "h2": 2, "h3": 2, "h4": 2,
	"h5": 2, "h6": 2,
}

// text copies the text up to the next tag.
func (c *htmlConv) text() {
	end := strings.IndexByte(c.src[c.pos:], '<')
	if end < 0 {
		end = len(c.src) - c.pos
	}
	t := html.UnescapeString(c.src[c.pos : c.pos+end])
	c.pos += end
	if c.pre > 0 {
		c.out.WriteString(t)
		return
	}
	t = strings.Join(strings.Fields(t), " ")
	if t == "" {
		c.space()
		return
	}
	if isSpace(c.src[c.pos-end]) {
		c.space()
	}
	c.out.WriteString(t)
	if isSpace(c.src[c.pos-1]) {
		c.space()
	}
}

func isSpace(b byte) bool { return b == ' ' || b == '\n' || b == '\t' || b == '\r' || b == '\f' }

// space writes one separating space unless a line or a space just ended.
func (c *htmlConv) space() {
	s := c.out.String()
	if s != "" && !strings.HasSuffix(s, " ") && !strings.HasSuffix(s, "\n") {
		c.out.WriteByte(' ')
	}
}

var tagName = regexp.MustCompile(`^<(/?)([a-zA-Z][a-zA-Z0-9-]*)`)

// tag handles the markup at c.pos: a comment, a declaration, an element
// tag, or a lone "<" that is just text.
func (c *htmlConv) tag() {
	rest := c.src[c.pos:]
	if strings.HasPrefix(rest, "<!--") {
		c.skipPast("-->")
		return
	}
	m := tagName.FindStringSubmatch(rest)
	if m == nil {
		if strings.HasPrefix(rest, "<!") || strings.HasPrefix(rest, "<?") {
			c.skipPast(">")
			return
		}
		c.out.WriteByte('<')
		c.pos++
		return
	}
	closing, name := m[1] == "/", strings.ToLower(m[2])
	n := tagEnd(rest)
	c.pos += n
	if rawElements[name] && !closing && !strings.HasSuffix(rest[:n], "/>") {
		c.skipPast("</" + name)
		c.skipPast(">")
		return
	}
	c.element(name, closing)
}

// element applies what an element's tag means for the text.
func (c *htmlConv) element(name string, closing bool) {
	switch {
	case name == "pre" && closing:
		c.pre = max(c.pre-1, 0)
	case name == "pre":
		c.pre++
	}
	switch {
	case name == "br":
		c.out.WriteByte('\n') // always: <br><br> is a blank line
	case name == "td" || name == "th":
		c.space()
	case blockBreaks[name] > 0:
		c.breaks(blockBreaks[name])
	}
	if !closing && len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6' {
		c.out.WriteString(strings.Repeat("#", int(name[1]-'0')) + " ")
	}
	if !closing && name == "li" {
		c.out.WriteString("- ")
	}
}

// breaks ends the output with at least n line breaks, not counting spaces
// before them; nothing at the very start.
func (c *htmlConv) breaks(n int) {
	s := strings.TrimRight(c.out.String(), " ")
	if s == "" {
		return
	}
	have := len(s) - len(strings.TrimRight(s, "\n"))
	for ; have < n; have++ {
		c.out.WriteByte('\n')
	}
}

// tagEnd is the length of the tag at the start of s, up to its ">" outside
// quoted attribute values, or all of s when it never closes.
func tagEnd(s string) int {
	var quote byte
	for i := 1; i < len(s); i++ {
		switch b := s[i]; {
		case quote != 0:
			if b == quote {
				quote = 0
			}
		case b == '"' || b == '\'':
			quote = b
		case b == '>':
			return i + 1
		}
	}
	return len(s)
}

// skipPast moves past the next occurrence of marker, matched without case,
// or to the end.
func (c *htmlConv) skipPast(marker string) {
	i := indexFold(c.src[c.pos:], marker)
	if i < 0 {
		c.pos = len(c.src)
		return
	}
	c.pos += i + len(marker)
}

// indexFold is strings.Index ignoring case, for a sub that starts with a
// non-letter; it does not copy s, which may be megabytes.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := strings.IndexByte(s[i:], sub[0])
		if j < 0 {
			return -1
		}
		i += j
		if i+len(sub) <= len(s) && strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

var manyBreaks = regexp.MustCompile(`\n{3,}`)

// tidyText trims trailing blanks from lines (leading ones are kept: they
// are <pre> indentation) and keeps at most one empty line in a row.
func tidyText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	s = strings.Join(lines, "\n")
	return strings.TrimSpace(manyBreaks.ReplaceAllString(s, "\n\n"))
}
