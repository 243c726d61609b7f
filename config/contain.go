package config

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// The keys of issue 10 (containment):
//
//	sandbox:
//	  secrets: [GITHUB_TOKEN, NPM_TOKEN]   # their values are scrubbed from results, events and the store
//	models:
//	  llama3.1: {input_per_mtok: 0, output_per_mtok: 0, window: 131072}
//	model:
//	  idle_timeout: 2m        # a model stream silent this long is cut and retried
//	  first_byte_timeout: 10m # a model call with no answer this long is cut and retried

// Sandbox.Secrets (sandbox.go) names environment variables whose values
// flower scrubs from everything it writes or sends.

// ModelPrice is what flower.yaml says of a model flower's price table
// lacks (an openai/NAME, a local model): its prices in USD per million
// tokens and its context window.
type ModelPrice struct {
	InputPerMTok  *float64 `yaml:"input_per_mtok"`
	OutputPerMTok *float64 `yaml:"output_per_mtok"`
	Window        int      `yaml:"window"`
}

// ModelSettings bound how long a model call may stay silent.
type ModelSettings struct {
	IdleTimeout      string `yaml:"idle_timeout"`
	FirstByteTimeout string `yaml:"first_byte_timeout"`
}

// Idle and FirstByte are the parsed timeouts; 0 when unset.
func (m ModelSettings) Idle() time.Duration      { d, _ := duration(m.IdleTimeout); return d }
func (m ModelSettings) FirstByte() time.Duration { d, _ := duration(m.FirstByteTimeout); return d }

func duration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	return time.ParseDuration(s)
}

// checkContain refuses values of these keys that would silently do the
// wrong thing.
func (c Config) checkContain(name string) error {
	bad := func(field, msg string, args ...any) error {
		return &Error{File: name, Field: field, Msg: fmt.Sprintf(msg, args...)}
	}
	for _, f := range []struct{ key, v string }{{"model.idle_timeout", c.Model.IdleTimeout}, {"model.first_byte_timeout", c.Model.FirstByteTimeout}} {
		if d, err := duration(f.v); err != nil || d < 0 || (f.v != "" && d < time.Second) {
			return bad(f.key, "%q is not a duration of at least 1s (write e.g. 2m or 90s)", f.v)
		}
	}
	for i, s := range c.Sandbox.Secrets {
		if s == "" {
			return bad(fmt.Sprintf("sandbox.secrets[%d]", i), "empty name (list environment variable names, e.g. GITHUB_TOKEN)")
		}
	}
	names := make([]string, 0, len(c.Models))
	for n := range c.Models {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		m := c.Models[n]
		for _, p := range []struct {
			key string
			v   *float64
		}{{"input_per_mtok", m.InputPerMTok}, {"output_per_mtok", m.OutputPerMTok}} {
			if p.v == nil {
				return bad("models."+n+"."+p.key, "missing: give the USD price per million tokens (0 for a free local model)")
			}
			if math.IsNaN(*p.v) || math.IsInf(*p.v, 0) || *p.v < 0 {
				return bad("models."+n+"."+p.key, "%v: give a price >= 0 in USD per million tokens", *p.v)
			}
		}
		if m.Window < 0 {
			return bad("models."+n+".window", "%d: give the context window in tokens (> 0), or leave it out", m.Window)
		}
	}
	return nil
}
