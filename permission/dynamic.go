package permission

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// dynamic reports why the commands a Bash line runs cannot be read off
// its text, or "" when they can (issue 20 item 5). Such a line is never
// covered by allow rules: bash evaluates a variable in arithmetic as an
// expression, and x='a[$(touch P)]'; echo $((x)) runs touch; ${x@P}
// expands prompt escapes, which run $(...); eval, source, trap and a
// shell reading a script from a here-document, a pipe or a file run text
// no rule saw; $(...) and `...` hand a command's words to another one.
func dynamic(line string) string {
	f, err := syntax.NewParser().Parse(strings.NewReader(line), "")
	if err != nil {
		return "it does not parse as bash"
	}
	why := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		if why == "" {
			why = dynamicNode(n)
		}
		return why == ""
	})
	return why
}

func dynamicNode(n syntax.Node) string {
	switch n := n.(type) {
	case *syntax.CmdSubst:
		return "it holds a command substitution, $(...) or `...`"
	case *syntax.ProcSubst:
		return "it holds a process substitution, <(...) or >(...)"
	case *syntax.ArithmExp:
		return arithmWhy(n.X)
	case *syntax.ArithmCmd:
		return arithmWhy(n.X)
	case *syntax.LetClause:
		for _, x := range n.Exprs {
			if why := arithmWhy(x); why != "" {
				return why
			}
		}
	case *syntax.ParamExp:
		return paramWhy(n)
	case *syntax.Assign:
		if n.Index != nil {
			return arithmWhy(n.Index)
		}
	case *syntax.TestClause:
		return testWhy(n.X)
	case *syntax.DeclClause:
		for _, a := range n.Args {
			if a.Naked && a.Value != nil && strings.HasPrefix(wordText(a.Value), "-") && strings.ContainsAny(wordText(a.Value), "in") {
				return "declare -i and -n evaluate what is assigned later"
			}
		}
	case *syntax.CallExpr:
		return callWhy(n)
	}
	return ""
}

// arithmWhy: arithmetic is static when its operands are number literals.
func arithmWhy(x syntax.ArithmExpr) string {
	why := ""
	syntax.Walk(x, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok && !number(w) {
			why = "it holds arithmetic on a variable, which bash evaluates as an expression ($((x)), ((x)), let, a[x])"
		}
		return why == ""
	})
	return why
}

func number(w *syntax.Word) bool {
	lit := w.Lit()
	if lit == "" {
		return false
	}
	for _, r := range strings.ToLower(lit) {
		if !strings.ContainsRune("0123456789xabcdef#", r) {
			return false
		}
	}
	return lit[0] >= '0' && lit[0] <= '9'
}

func paramWhy(p *syntax.ParamExp) string {
	switch {
	case p.Excl:
		return "it holds an indirect expansion, ${!x}"
	case p.Exp != nil && p.Exp.Op == syntax.OtherParamOps:
		return "it holds a ${x@...} transformation, which may run commands (${x@P})"
	case p.Index != nil:
		return arithmWhy(p.Index)
	case p.Slice != nil:
		if why := arithmWhy(p.Slice.Offset); why != "" {
			return why
		}
		if p.Slice.Length != nil {
			return arithmWhy(p.Slice.Length)
		}
	}
	return ""
}

// testWhy: [[ a -eq b ]] and friends evaluate their operands as arithmetic.
func testWhy(x syntax.TestExpr) string {
	why := ""
	syntax.Walk(x, func(n syntax.Node) bool {
		b, ok := n.(*syntax.BinaryTest)
		if !ok || why != "" {
			return why == ""
		}
		switch b.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, side := range []syntax.TestExpr{b.X, b.Y} {
				if w, ok := side.(*syntax.Word); !ok || !number(w) {
					why = "it compares variables with -eq, -lt...: bash evaluates them as arithmetic"
				}
			}
		}
		return why == ""
	})
	return why
}

// shells read a script: from -c, else from stdin or a file.
var shells = map[string]bool{"bash": true, "sh": true, "zsh": true, "dash": true, "ksh": true, "mksh": true}

// callWhy: a command whose name is not literal, or that runs text as a
// script (eval, source, trap, a shell without a literal -c).
func callWhy(c *syntax.CallExpr) string {
	if len(c.Args) == 0 {
		return ""
	}
	words := make([]string, len(c.Args))
	for i, w := range c.Args {
		words[i] = wordText(w)
	}
	words = unwrap(words)
	if len(words) == 0 {
		return ""
	}
	name := words[0]
	if i := strings.LastIndexByte(name, '/'); i >= 0 && !strings.Contains(name, "$") {
		name = name[i+1:]
	}
	switch {
	case strings.ContainsAny(name, "$`*?[") || name == "":
		return "its command name is not literal"
	case name == "eval":
		return "it uses eval"
	case name == "source" || name == ".":
		return "it sources a script"
	case name == "trap":
		return "it sets a trap, which runs a string later"
	case shells[name]:
		inner, ok := innerScript(append([]string{"sh"}, words[1:]...))
		if !ok {
			return "it runs a shell on a script from a here-document, a pipe or a file"
		}
		if why := dynamic(inner); why != "" {
			return why
		}
	}
	return ""
}
