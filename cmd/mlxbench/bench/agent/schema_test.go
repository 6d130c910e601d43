package agent

import (
	"strings"
	"testing"
)

var calcSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"op": map[string]any{"type": "string", "enum": []any{"add", "subtract", "multiply", "divide"}},
		"a":  map[string]any{"type": "number"},
		"b":  map[string]any{"type": "number"},
		"n":  map[string]any{"type": "integer", "minimum": 1, "maximum": 10},
		"xs": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	},
	"required":             []any{"op", "a", "b"},
	"additionalProperties": false,
}

func TestCheckArguments(t *testing.T) {
	for _, tc := range []struct {
		args string
		want string // "" = valid; else a substring of the joined problems
	}{
		{`{"op": "add", "a": 1, "b": 2.5}`, ""},
		{`{"op": "divide", "a": 1e3, "b": -2, "n": 3, "xs": ["x"]}`, ""},
		{`{"op": "add", "a": 1}`, `missing required "b"`},
		{`{"op": "power", "a": 1, "b": 2}`, "is not one of"},
		{`{"op": "add", "a": "1", "b": 2}`, "arguments.a: want number, got string"},
		{`{"op": "add", "a": 1, "b": 2, "c": 3}`, `unexpected property "c"`},
		{`{"op": "add", "a": 1, "b": 2, "n": 2.5}`, "want integer"},
		{`{"op": "add", "a": 1, "b": 2, "n": 11}`, "above the maximum"},
		{`{"op": "add", "a": 1, "b": 2, "n": 0}`, "below the minimum"},
		{`{"op": "add", "a": 1, "b": 2, "xs": [1]}`, "arguments.xs[0]: want string"},
		{`{"op": "add", "a": 1, "b": `, "not JSON"},
		{`[1, 2]`, "not a JSON object"},
		{`{"op": "add", "a": 1, "b": 2} {}`, "data after"},
		{``, "not JSON"},
	} {
		got := strings.Join(CheckArguments(tc.args, calcSchema), "; ")
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.args, got, tc.want)
		}
	}
}
