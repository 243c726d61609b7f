package config

import (
	"fmt"
	"os"
)

// DefaultFlags names the CLI flags whose defaults the files may set
// (FlagDefaults), in the order they are applied.
var DefaultFlags = []string{"model", "timeout", "max-turns", "max-asks", "rounds", "budget"}

// FlagDefaults are the flag defaults c sets (R10.2), by flag name, as the
// flag would parse them: model.name (unless $FLOWER_MODEL is set, which
// wins over the files), timeout, max_turns, max_asks, rounds, budget.
// A key c leaves unset is absent.
func (c Config) FlagDefaults() map[string]string {
	d := map[string]string{}
	if c.Model.Name != "" && os.Getenv("FLOWER_MODEL") == "" {
		d["model"] = c.Model.Name
	}
	setFlag(d, "timeout", c.Timeout)
	setFlag(d, "max-turns", c.MaxTurns)
	setFlag(d, "max-asks", c.MaxAsks)
	setFlag(d, "rounds", c.Rounds)
	setFlag(d, "budget", c.Budget)
	return d
}

// setFlag puts *p as flag name's default when p is set.
func setFlag[T any](d map[string]string, name string, p *T) {
	if p != nil {
		d[name] = fmt.Sprint(*p)
	}
}
