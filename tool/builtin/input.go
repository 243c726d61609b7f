package builtin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
)

// decodeInput unmarshals a model's tool input into v, which must be a
// pointer to a struct. A missing (or null) required field, malformed JSON or
// a field of the wrong type is an error naming the field; the tools turn it
// into an is_error result the model can act on. Unknown fields are ignored:
// models add them, and refusing would only cost a round trip.
func decodeInput(input json.RawMessage, v any, required ...string) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(input, &fields); err != nil || fields == nil {
		return fmt.Errorf("input must be a JSON object: %s", brief(input))
	}
	for _, name := range required {
		raw, ok := fields[name]
		if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return fmt.Errorf("missing required field %q", name)
		}
	}
	if err := json.Unmarshal(input, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("field %q must be %s, got %s", te.Field, kindName(te.Type), te.Value)
		}
		return fmt.Errorf("invalid input: %w", err)
	}
	return nil
}

// brief quotes at most 100 bytes of bad input, enough to recognize it.
func brief(b []byte) string {
	if len(b) > 100 {
		return fmt.Sprintf("%q…", b[:100])
	}
	return fmt.Sprintf("%q", b)
}

func kindName(t reflect.Type) string {
	switch {
	case t == nil:
		return "a valid value"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "a boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Float64:
		return "an integer"
	}
	return "a " + t.Kind().String()
}

// flexInt is an integer field that also accepts 100.0 and "100": some
// models send numbers that way, and the meaning is not in doubt.
type flexInt int

var intType = reflect.TypeFor[int]()

func (n *flexInt) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if u, err := strconv.Unquote(s); err == nil {
		s = u
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return &json.UnmarshalTypeError{Value: string(b), Type: intType}
	}
	*n = flexInt(f)
	return nil
}

// flexBool is a boolean field that also accepts "true" and "false".
type flexBool bool

var boolType = reflect.TypeFor[bool]()

func (v *flexBool) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if u, err := strconv.Unquote(s); err == nil {
		s = u
	}
	x, err := strconv.ParseBool(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: boolType}
	}
	*v = flexBool(x)
	return nil
}
