package human

import (
	"strconv"
	"strings"
)

// Known reports whether id was ever issued by this channel, waiting or
// settled: an API tells "no such ask" (404) from "no longer waiting".
func (c *Channel) Known(id string) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "q"))
	if err != nil || !strings.HasPrefix(id, "q") {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return n >= 1 && n <= c.seq
}

// Pick turns an answer that is an option's number ("2") into that option,
// for a question with options; any other answer is returned as is. Every
// front end answers the same way (the terminal and the API).
func (a Ask) Pick(answer string) string {
	n, err := strconv.Atoi(strings.TrimSpace(answer))
	if err != nil || n < 1 || n > len(a.Options) {
		return answer
	}
	return a.Options[n-1]
}
