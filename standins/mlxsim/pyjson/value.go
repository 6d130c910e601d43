package pyjson

import (
	"math"
	"strconv"
	"strings"
)

// Int is a Python int as decoded from JSON. Text keeps the literal (Python
// ints are unbounded); V is the value saturated to the int64 range.
type Int struct {
	Text string
	V    int64
}

// NewInt is int(text) for a JSON integer literal.
func NewInt(text string) Int {
	if text == "-0" {
		text = "0"
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		if strings.HasPrefix(text, "-") {
			v = math.MinInt64
		} else {
			v = math.MaxInt64
		}
	}
	return Int{Text: text, V: v}
}

// TypeName is type(v).__name__.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case Int, int, int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case *Dict:
		return "dict"
	}
	return "object"
}

// Truthy is bool(v).
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case Int:
		return x.V != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case *Dict:
		return x.Len() > 0
	}
	return true
}
