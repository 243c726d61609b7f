package permission

import (
	"strconv"
	"strings"
)

// Reply is the person's answer to a call an ask rule matched.
type Reply int

const (
	Refuse Reply = iota // deny this call
	Once                // allow this call
	ForRun              // allow this call and every later one the same ask rules match, in this run
)

// ReplyOptions are the choices offered to the person, in Reply order from
// Once: "1" is allow once.
var ReplyOptions = []string{"allow once", "allow for this run", "deny"}

// ParseReply reads an answer: an option's text or number, or y/yes/allow
// for once and always/run for this run. Anything else denies: a person
// who typed something unexpected did not say yes.
func ParseReply(answer string) Reply {
	a := strings.ToLower(strings.TrimSpace(answer))
	if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= len(ReplyOptions) {
		a = ReplyOptions[n-1]
	}
	switch a {
	case "allow once", "allow", "once", "y", "yes":
		return Once
	case "allow for this run", "for this run", "run", "always":
		return ForRun
	}
	return Refuse
}
