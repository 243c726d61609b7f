package model

import (
	"strings"
	"sync"
)

// Info is what flower knows of a model: its context window and its prices
// in USD per million tokens.
type Info struct {
	Window     int
	Input      float64
	Output     float64
	CacheRead  float64
	CacheWrite float64
}

// Cost is the price of u at these rates.
func (i Info) Cost(u Usage) float64 {
	return (float64(u.Input)*i.Input + float64(u.Output)*i.Output +
		float64(u.CacheRead)*i.CacheRead + float64(u.CacheCreation)*i.CacheWrite) / 1e6
}

// prices maps a model name prefix to its Info; the longest prefix wins.
var prices = map[string]Info{
	"claude-opus-4":    {Window: 200_000, Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
	"claude-opus-4-5":  {Window: 200_000, Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
	"claude-opus-4-6":  {Window: 200_000, Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
	"claude-sonnet-4":  {Window: 200_000, Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"claude-haiku-4":   {Window: 200_000, Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
	"claude-3-5-haiku": {Window: 200_000, Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1},
	"gpt-4o":           {Window: 128_000, Input: 2.5, Output: 10, CacheRead: 1.25},
	"gpt-4o-mini":      {Window: 128_000, Input: 0.15, Output: 0.6, CacheRead: 0.075},
	"gpt-4.1":          {Window: 1_047_576, Input: 2, Output: 8, CacheRead: 0.5},
	"gpt-4.1-mini":     {Window: 1_047_576, Input: 0.4, Output: 1.6, CacheRead: 0.1},
	"gpt-5":            {Window: 400_000, Input: 1.25, Output: 10, CacheRead: 0.125},
	"gpt-5-mini":       {Window: 400_000, Input: 0.25, Output: 2, CacheRead: 0.025},
	"o3":               {Window: 200_000, Input: 2, Output: 8, CacheRead: 0.5},
	"o4-mini":          {Window: 200_000, Input: 1.1, Output: 4.4, CacheRead: 0.275},
	"demo":             {Window: 200_000}, // the offline demo costs nothing
}

// Unknown is used for a model the table does not name (a local model, say):
// a modest window and no cost.
var Unknown = Info{Window: 128_000}

// declared are the models a user described (flower.yaml models:), by exact
// name; they win over the table.
var declared sync.Map // string -> Info

// Declare records what the user says of a model: a local model's window,
// the prices of a model the table lacks. Lookup returns it for that exact
// name (an "openai/" prefix is ignored).
func Declare(name string, info Info) {
	declared.Store(strings.TrimPrefix(name, "openai/"), info)
}

// Lookup returns the Info of a model: a declared one, else by the longest
// matching name prefix of the table; and whether flower knew it.
func Lookup(name string) (Info, bool) {
	if i, ok := declared.Load(strings.TrimPrefix(name, "openai/")); ok {
		return i.(Info), true
	}
	best, found := "", false
	for p := range prices {
		if strings.HasPrefix(name, p) && len(p) > len(best) {
			best, found = p, true
		}
	}
	if !found {
		return Unknown, false
	}
	return prices[best], true
}
