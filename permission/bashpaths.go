package permission

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shellPaths are the files a Bash line names where they can be seen
// (issue 20 item 5): the literal arguments of its commands (what cat,
// head or cp read) and the files of < redirections are reads; the files
// of >, >> and &> are writes. Read rules then apply to the reads and
// Edit/Write rules to the writes, so that cat .env meets Read(.env). A
// path built at run time is not seen: the sandbox, not the rules, is the
// boundary there.
func shellPaths(line string, depth int) (reads, writes []string) {
	f, err := syntax.NewParser().Parse(strings.NewReader(line), "")
	if err != nil || depth > 3 {
		return nil, nil
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			for _, rd := range n.Redirs {
				p, ok := pathWord(rd.Word)
				switch {
				case !ok:
				case rd.Op == syntax.RdrIn:
					reads = append(reads, p)
				case rd.Op == syntax.RdrInOut:
					reads, writes = append(reads, p), append(writes, p)
				case rd.Op == syntax.RdrOut, rd.Op == syntax.AppOut, rd.Op == syntax.RdrAll, rd.Op == syntax.AppAll, rd.Op == syntax.RdrClob:
					writes = append(writes, p)
				}
			}
		case *syntax.CallExpr:
			if len(n.Args) < 2 {
				return true
			}
			for _, w := range n.Args[1:] {
				if p, ok := pathWord(w); ok && !strings.HasPrefix(p, "-") {
					reads = append(reads, p)
				}
			}
			words := make([]string, len(n.Args))
			for i, w := range n.Args {
				words[i] = wordText(w)
			}
			if words = unwrap(words); len(words) > 0 {
				if inner, ok := innerScript(words); ok {
					r, w := shellPaths(inner, depth+1)
					reads, writes = append(reads, r...), append(writes, w...)
				}
			}
		}
		return true
	})
	return reads, writes
}

// pathWord is a word's text when it is literal, or starts with $HOME,
// which expandHome reads.
func pathWord(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	t := wordText(w)
	if !strings.ContainsAny(t, "$`") {
		return t, t != ""
	}
	for _, pre := range []string{"$HOME/", "${HOME}/", `"$HOME"/`, `"${HOME}"/`} {
		if rest, ok := strings.CutPrefix(t, pre); ok && !strings.ContainsAny(rest, "$`") {
			return "$HOME/" + strings.Trim(rest, `"`), true
		}
	}
	return "", false
}

// expandHome reads a leading ~ or $HOME as the home directory, as the
// shell would: Read ~/.ssh/id_rsa meets Read(~/.ssh/**).
func expandHome(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" || p == "$HOME" || p == "${HOME}" {
		return home
	}
	for _, pre := range []string{"~/", "$HOME/", "${HOME}/"} {
		if rest, ok := strings.CutPrefix(p, pre); ok {
			return filepath.Join(home, rest)
		}
	}
	return p
}
