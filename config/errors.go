package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Error is a problem in flower.yaml. Its message is a single line,
// file:line:col: field: problem (fix), because it ends up in terminals,
// logs and editor problem lists, where go-yaml's multi-line source
// excerpt would be cut or garbled.
type Error struct {
	File   string
	Line   int    // 1-based; 0 when go-yaml reported no position
	Column int    // 1-based; 0 when go-yaml reported no position
	Field  string // key path such as resume.per_step.publish; "" for syntax errors and the top level
	Msg    string // what is wrong and how to fix it
	Err    error  // the go-yaml error behind it, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// valueError is a semantic error found while walking or decoding. node
// locates it: its position and, unless field is set, its key path. tok
// positions an error that has no node.
type valueError struct {
	node  ast.Node
	tok   *token.Token
	field []string
	msg   string
}

func (e *valueError) Error() string { return e.msg }

// describe turns any error from parsing or decoding into a one-line
// *Error, finding the field at fault by walking body back to the node
// the error names, or to the node holding its token.
func describe(name string, body ast.Node, err error) *Error {
	out := &Error{File: name, Err: err}
	var ve *valueError
	var ye yaml.Error
	switch {
	case errors.As(err, &ve):
		out.Err = nil // our own message, nothing underneath
		tok := ve.tok
		if tok == nil && ve.node != nil {
			tok = tokenOf(ve.node)
		}
		setPos(out, tok)
		field := ve.field
		if field == nil && ve.node != nil {
			field = pathOfNode(body, ve.node)
		}
		out.Field = joinPath(field)
		out.Msg = ve.msg
	case errors.As(err, &ye):
		setPos(out, ye.GetToken())
		path := pathOfToken(body, ye.GetToken())
		out.Field = joinPath(path)
		out.Msg = yamlMessage(err, path, body, ye)
	default:
		out.Msg = err.Error()
	}
	out.Msg = oneLine(out.Msg)
	return out
}

// yamlMessage rewords go-yaml's messages, which speak of Go types, into
// what the user wrote and what to write instead.
func yamlMessage(err error, path []string, body ast.Node, ye yaml.Error) string {
	var unknown *yaml.UnknownFieldError
	var unexpected *yaml.UnexpectedNodeTypeError
	var syntax *yaml.SyntaxError
	var duplicate *yaml.DuplicateKeyError
	switch {
	case errors.As(err, &unknown):
		return fmt.Sprintf("unknown key (%s)", keyChoices(path))
	case errors.As(err, &unexpected):
		return fmt.Sprintf("got %s, want %s", kindOf(nodeOfToken(body, ye.GetToken())), wantAt(path, unexpected.Expected))
	case errors.As(err, &duplicate):
		// Keys that differ in spelling but decode alike, like 0x10 and 16.
		return duplicate.GetMessage() + " (keep one)"
	case errors.As(err, &syntax):
		return "invalid YAML: " + syntax.GetMessage()
	}
	return ye.GetMessage()
}

func setPos(e *Error, tok *token.Token) {
	if tok == nil || tok.Position == nil {
		return
	}
	e.Line, e.Column = tok.Position.Line, tok.Position.Column
}

// wantAt describes what belongs at a key path, as the fix for a value of
// the wrong kind; expected is go-yaml's bare answer, for other paths.
func wantAt(path []string, expected ast.NodeType) string {
	switch joinPath(path) {
	case "":
		return "a mapping with a resume key"
	case "resume":
		return fmt.Sprintf("a mapping with keys %s", keyList(keysOf(reflect.TypeFor[Resume]())))
	case "resume.per_step":
		return fmt.Sprintf("a mapping of step names to policies (%s)", policyChoices)
	case "resume.per_tool":
		return fmt.Sprintf("a mapping of tool names to policies (%s)", policyChoices)
	}
	return "a " + expected.YAMLName()
}

// keyChoices lists the keys allowed beside an unknown one, read from the
// struct tags so the hint cannot drift from what the decoder accepts.
func keyChoices(path []string) string {
	if len(path) == 0 {
		return "remove it"
	}
	t := reflect.TypeFor[Config]()
	for _, key := range path[:len(path)-1] {
		f, ok := fieldByKey(t, key)
		if !ok {
			return "remove it"
		}
		t = f.Type
	}
	keys := keysOf(t)
	if len(keys) == 0 {
		return "remove it"
	}
	return "use " + keyList(keys)
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for f := range t.Fields() {
		if f.Tag.Get("yaml") == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func keysOf(t reflect.Type) []string {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for f := range t.Fields() {
		if k := f.Tag.Get("yaml"); k != "-" { // not from YAML (Config.Claude)
			keys = append(keys, k)
		}
	}
	return keys
}

// keyList joins keys as prose: "a", "a or b", "a, b or c".
func keyList(keys []string) string {
	if len(keys) < 2 {
		return strings.Join(keys, "")
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " or " + keys[len(keys)-1]
}

// oneLine folds any line breaks go-yaml put in a message, keeping the
// one-line promise of Error.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
