package permission

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// commands splits a shell command line into the simple commands it runs,
// each as its words joined by single spaces, with assignments and
// wrappers removed: "cd x && FOO=1 nohup git push" is ["cd x", "git
// push"]. It descends into pipelines, lists, subshells, $(...), `...`,
// function bodies and the strings of bash -c, sh -c and eval. Text that
// does not parse is split on the shell's operators instead, which errs on
// the side of finding more commands.
func commands(line string) []string {
	return commandsDepth(line, 0)
}

func commandsDepth(line string, depth int) []string {
	f, err := syntax.NewParser().Parse(strings.NewReader(line), "")
	if err != nil || depth > 3 {
		return roughSplit(line)
	}
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		words := make([]string, len(call.Args))
		for i, w := range call.Args {
			words[i] = wordText(w)
		}
		words = unwrap(words)
		if len(words) == 0 {
			return true
		}
		out = append(out, strings.Join(strings.Fields(strings.Join(words, " ")), " "))
		if inner, ok := innerScript(words); ok {
			out = append(out, commandsDepth(inner, depth+1)...)
		}
		return true
	})
	return out
}

// wordText is a word's value when it is literal (quotes removed), else its
// source text.
func wordText(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return source(w)
				}
				b.WriteString(lit.Value)
			}
		default:
			return source(w)
		}
	}
	return b.String()
}

func source(n syntax.Node) string {
	var b strings.Builder
	_ = syntax.NewPrinter().Print(&b, n)
	return b.String()
}

// unwrap drops the commands that only run the rest of the line: nohup git
// push is git push.
func unwrap(w []string) []string {
	for len(w) > 0 {
		switch w[0] {
		case "nohup", "time", "command", "exec", "builtin", "!", "if", "then", "else", "elif", "while", "until", "do":
			w = w[1:]
		case "sudo", "nice", "env":
			w = skipOptions(w[1:], w[0])
		case "timeout":
			w = skipOptions(w[1:], "timeout")
			if len(w) > 0 {
				w = w[1:] // the duration
			}
		default:
			return w
		}
	}
	return w
}

// skipOptions drops leading options (and env's VAR=value) of a wrapper.
func skipOptions(w []string, wrapper string) []string {
	for len(w) > 0 {
		a := w[0]
		switch {
		case a == "--":
			return w[1:]
		case wrapper == "env" && strings.Contains(a, "=") && !strings.HasPrefix(a, "-"):
			w = w[1:]
		case (a == "-n" && wrapper == "nice") || (a == "-u" && wrapper == "sudo") || (a == "-s" && wrapper == "timeout") || (a == "-k" && wrapper == "timeout"):
			w = w[min(2, len(w)):]
		case strings.HasPrefix(a, "-"):
			w = w[1:]
		default:
			return w
		}
	}
	return w
}

// innerScript is the script a shell runs from a string: bash -c STR, eval STR...
func innerScript(w []string) (string, bool) {
	switch w[0] {
	case "eval":
		return strings.Join(w[1:], " "), len(w) > 1
	case "bash", "sh", "zsh", "dash", "ksh":
		for i := 1; i < len(w)-1; i++ {
			if strings.HasPrefix(w[i], "-") && strings.Contains(w[i], "c") && !strings.HasPrefix(w[i], "--") {
				return w[i+1], true
			}
		}
	}
	return "", false
}

// roughSplit splits on the shell's control characters.
func roughSplit(line string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(";&|\n()`{}", r) }) {
		part = strings.TrimPrefix(strings.TrimSpace(part), "$")
		if words := unwrap(strings.Fields(part)); len(words) > 0 {
			out = append(out, strings.Join(words, " "))
		}
	}
	return out
}
