package config

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// maxDepth bounds how deep walk goes. flower.yaml needs about six
// levels (mapping, key, mapping, key, value...); anything much deeper is
// wrong anyway, and refusing it early keeps the walks and the decoder
// from spending quadratic time on garbage.
const maxDepth = 32

// visitFunc sees a node, the key path leading to it and its nesting
// depth; returning false ends the walk.
type visitFunc func(node ast.Node, path []string, depth int) bool

// walk visits node and everything under it in document order, with the
// key path leading to it, until visit returns false. Keys are visited
// with the path of their entry. Aliases are not followed. Nodes deeper
// than maxDepth are visited but not descended into, which bounds every
// walk however deep the input.
func walk(node ast.Node, path []string, depth int, visit visitFunc) bool {
	if isNil(node) {
		return true
	}
	if mv, ok := node.(*ast.MappingValueNode); ok {
		return walkEntry(mv, path, depth, visit)
	}
	if !visit(node, path, depth) {
		return false
	}
	if depth > maxDepth {
		return true
	}
	switch n := node.(type) {
	case *ast.DocumentNode:
		return walk(n.Body, path, depth+1, visit)
	case *ast.MappingNode:
		for _, mv := range n.Values {
			if !walk(mv, path, depth+1, visit) {
				return false
			}
		}
	case *ast.SequenceNode:
		for i, v := range n.Values {
			if !walk(v, append(clip(path), fmt.Sprintf("[%d]", i)), depth+1, visit) {
				return false
			}
		}
	case *ast.AnchorNode:
		return walk(n.Value, path, depth+1, visit)
	case *ast.TagNode:
		return walk(n.Value, path, depth+1, visit)
	case *ast.MappingKeyNode:
		return walk(n.Value, path, depth+1, visit)
	}
	return true
}

// walkEntry walks one key: value pair. The MappingValueNode is visited
// with the entry's path, so visitors see key and value together under
// the path they belong to.
func walkEntry(mv *ast.MappingValueNode, path []string, depth int, visit visitFunc) bool {
	if isNil(mv.Key) {
		return walk(mv.Value, path, depth+1, visit)
	}
	entry := append(clip(path), keyString(mv.Key))
	if !visit(mv, entry, depth) {
		return false
	}
	if depth > maxDepth {
		return true
	}
	return walk(mv.Key, entry, depth+1, visit) && walk(mv.Value, entry, depth+1, visit)
}

// clip stops append from sharing a backing array between siblings.
func clip(path []string) []string {
	return path[:len(path):len(path)]
}

// keyString is a key as the decoder sees it: the scalar's value, without
// quotes, and "" for a null key such as ~.
func keyString(key ast.Node) string {
	if k, ok := key.(*ast.MappingKeyNode); ok && !isNil(k.Value) {
		key = k.Value
	}
	if isNull(key) {
		return ""
	}
	if s, ok := key.(ast.ScalarNode); ok {
		return fmt.Sprint(s.GetValue())
	}
	return key.String()
}

// isNil catches both a nil interface and a typed nil pointer, which the
// parser leaves in some fields of malformed input.
func isNil(node ast.Node) bool {
	if node == nil {
		return true
	}
	switch n := node.(type) {
	case *ast.MappingValueNode:
		return n == nil
	case *ast.MappingNode:
		return n == nil
	case *ast.SequenceNode:
		return n == nil
	case *ast.DocumentNode:
		return n == nil
	}
	return false
}

// pathOfNode finds the key path of target under body; nil if absent.
func pathOfNode(body, target ast.Node) []string {
	var found []string
	walk(body, nil, 0, func(n ast.Node, path []string, _ int) bool {
		if n == target {
			found = path
			return false
		}
		return true
	})
	return found
}

// nodeOfToken and pathOfToken find the innermost node holding tok, the
// only locator go-yaml errors carry. Innermost, because a block mapping
// shares its first key's token.
func nodeOfToken(body ast.Node, tok *token.Token) ast.Node {
	n, _ := findToken(body, tok)
	return n
}

func pathOfToken(body ast.Node, tok *token.Token) []string {
	_, p := findToken(body, tok)
	return p
}

func findToken(body ast.Node, tok *token.Token) (ast.Node, []string) {
	var node ast.Node
	var found []string
	if tok == nil {
		return nil, nil
	}
	walk(body, nil, 0, func(n ast.Node, path []string, _ int) bool {
		if n.GetToken() == tok {
			node, found = n, path
		}
		return true
	})
	return node, found
}

// joinPath renders a key path for messages: resume.per_step.publish.
// A key that is not a plain word is quoted, so a step named "a.b" stays
// one segment and a key with a line break cannot split the message.
func joinPath(path []string) string {
	var b strings.Builder
	for _, seg := range path {
		index := strings.HasPrefix(seg, "[") // added by walk for sequences
		if b.Len() > 0 && !index {
			b.WriteByte('.')
		}
		if !index && !isPlainKey(seg) {
			seg = strconv.Quote(seg)
		}
		b.WriteString(seg)
	}
	return b.String()
}

func isPlainKey(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// tokenOf is where a node starts, for its error's line and column. A
// block mapping's own token is the first ':', so point at its first key.
func tokenOf(node ast.Node) *token.Token {
	if m, ok := node.(*ast.MappingNode); ok && !m.IsFlowStyle && len(m.Values) > 0 && !isNil(m.Values[0]) && !isNil(m.Values[0].Key) {
		return m.Values[0].Key.GetToken()
	}
	return node.GetToken()
}
