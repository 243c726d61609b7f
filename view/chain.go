package view

import "github.com/flower-run/flower/store"

// chain orders entries by walking parent links back from the newest one.
// An entry whose parent is missing is re-parented to the nearest surviving
// entry before it, so the chain never breaks and no history is lost; an
// entry not on the chain from the leaf (a dead branch) is left out. at
// holds the index in entries of each chained entry; nil means the chain is
// entries itself.
func chain(entries []store.Entry) (chained []store.Entry, at []int) {
	if len(entries) < 2 || linear(entries) {
		return entries, nil
	}
	rev := walk(entries)
	chained, at = make([]store.Entry, len(rev)), make([]int, len(rev))
	for k, i := range rev {
		chained[len(rev)-1-k], at[len(rev)-1-k] = entries[i], i
	}
	return chained, at
}

// walk is the indexes of the chain from the newest entry back.
func walk(entries []store.Entry) []int {
	at := make(map[string]int, len(entries))
	for i, e := range entries {
		at[e.UUID] = i
	}
	var rev []int
	seen := map[int]bool{}
	for i := len(entries) - 1; i >= 0 && !seen[i]; {
		seen[i] = true
		rev = append(rev, i)
		p, ok := at[entries[i].Parent]
		if !ok || p >= i { // missing (or a loop): nearest surviving ancestor
			p = i - 1
		}
		i = p
	}
	return rev
}

// linear reports whether each entry's parent is the one before it: the
// common case, which needs no walk.
func linear(entries []store.Entry) bool {
	for i := 1; i < len(entries); i++ {
		if entries[i].Parent != entries[i-1].UUID {
			return false
		}
	}
	return true
}
