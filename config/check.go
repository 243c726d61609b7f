package config

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// maxBrackets bounds flow nesting ([ and {) in the raw bytes. go-yaml's
// parser takes quadratic time on deep flow nesting (seconds at ten
// thousand levels), so absurd input is refused before parsing. Brackets
// inside quotes and comments count too; a real flower.yaml never gets
// near the limit.
const maxBrackets = 1000

func checkBrackets(data []byte) error {
	depth, line, col := 0, 1, 0
	for _, c := range data {
		col++
		switch c {
		case '\n':
			line, col = line+1, 0
		case '[', '{':
			depth++
		case ']', '}':
			depth = max(depth-1, 0)
		}
		if depth > maxBrackets {
			return &valueError{
				tok: &token.Token{Position: &token.Position{Line: line, Column: col}},
				msg: fmt.Sprintf("invalid YAML: brackets nested more than %d deep", maxBrackets),
			}
		}
	}
	return nil
}

// onlyBody returns the single document's content, nil for an empty file.
// A second document is refused rather than ignored: the decoder would
// read only the first, and settings in the second would silently not
// apply.
func onlyBody(file *ast.File) (ast.Node, error) {
	var body ast.Node
	for _, doc := range file.Docs {
		if doc == nil || isNull(doc.Body) || doc.Body.Type() == ast.DirectiveType {
			continue // empty, comments only, a bare ~, or a %YAML line
		}
		if body != nil {
			return nil, &valueError{tok: docStart(doc), msg: "a second YAML document (keep one: remove this --- and what follows, or merge it into the first)"}
		}
		body = doc.Body
	}
	return body, nil
}

// docStart is where a document begins: its --- if it has one.
func docStart(doc *ast.DocumentNode) *token.Token {
	if doc.Start != nil {
		return doc.Start
	}
	return doc.Body.GetToken()
}

// checkShape refuses, before decoding, what the decoder would accept
// silently or could not point at; see shapeError.
func checkShape(body ast.Node) error {
	var found error
	walk(body, nil, 0, func(node ast.Node, path []string, depth int) bool {
		found = shapeError(node, path, depth)
		return found == nil
	})
	return found
}

// shapeError checks one node:
//   - nesting deeper than maxDepth, so the decoder never recurses on it;
//   - anchors, aliases, merge keys and tags: a file this small gains
//     nothing from them; a value reached through an alias would be
//     reported at the anchor, far from where it is used; and a tagged
//     mapping confuses the decoder into "got a mapping, want a mapping";
//   - a policy key with no value (`publish:`): the decoder skips nulls,
//     and a forgotten value read as "unset" would fall back to retry, the
//     one outcome a `discard` was written to prevent;
//   - an empty step or tool name, which would match callers that pass ""
//     for "no step".
func shapeError(node ast.Node, path []string, depth int) error {
	if depth > maxDepth {
		// Point at where nesting passes the limit, but name only the
		// first three keys, the deepest the schema goes: that is where
		// the value of the wrong shape starts.
		return &valueError{node: node, field: clip(path[:min(len(path), 3)]),
			msg: "nested far too deeply (flower.yaml needs no more than resume.per_step.<step>: <policy>)"}
	}
	switch n := node.(type) {
	case *ast.AnchorNode, *ast.AliasNode:
		return &valueError{node: n, msg: "anchors and aliases are not supported (write the value out)"}
	case *ast.TagNode:
		return &valueError{node: n, msg: fmt.Sprintf("tags are not supported (remove %s)", n.Start.Value)}
	case *ast.MappingValueNode:
		return entryError(n, path)
	}
	return nil
}

func entryError(mv *ast.MappingValueNode, path []string) error {
	switch {
	case mv.Key.IsMergeKey():
		return &valueError{node: mv.Key, field: clip(path[:len(path)-1]), msg: "merge keys (<<) are not supported (write the keys out)"}
	case !isPolicyPath(path):
		return nil
	case len(path) == 3 && path[2] == "":
		return &valueError{node: mv.Key, msg: "empty name (name a step or tool, e.g. publish or Bash)"}
	case isNull(mv.Value):
		return &valueError{node: mv.Key, msg: fmt.Sprintf("no policy given (%s)", policyChoices)}
	}
	return nil
}

// isPolicyPath reports whether a key path holds a Policy: resume.default
// or an entry of resume.per_step or resume.per_tool.
func isPolicyPath(path []string) bool {
	switch len(path) {
	case 2:
		return path[0] == "resume" && path[1] == "default"
	case 3:
		return path[0] == "resume" && (path[1] == "per_step" || path[1] == "per_tool")
	}
	return false
}

func isNull(node ast.Node) bool {
	return node == nil || node.Type() == ast.NullType
}
