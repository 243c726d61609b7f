package tool

// DefaultOutputCap is how many bytes of a tool's output the model sees
// when nothing else is configured.
const DefaultOutputCap = 30000

// Cap trims text to about limit bytes the way Bash output is trimmed: the
// beginning and the end are kept, with a marker saying how much was cut.
// Tools from outside this package (MCP servers) use it so that a large
// result costs the model what a built-in one would. limit <= 0 means
// DefaultOutputCap.
func Cap(text string, limit int) string {
	if limit <= 0 {
		limit = DefaultOutputCap
	}
	if len(text) <= limit {
		return text
	}
	w := NewCapWriter(limit)
	_, _ = w.Write([]byte(text))
	return w.String()
}
