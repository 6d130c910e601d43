package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// CheckArguments says what is wrong with a tool call's arguments against
// the tool's JSON Schema: they must parse as a JSON object and match the
// schema's subset that tool definitions use (type, properties, required,
// enum, additionalProperties false, minimum, maximum, items). No problems:
// the call is valid.
func CheckArguments(arguments string, schema map[string]any) []string {
	var v any
	dec := json.NewDecoder(strings.NewReader(arguments))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return []string{"arguments are not JSON: " + err.Error()}
	}
	if dec.More() {
		return []string{"arguments have data after the JSON value"}
	}
	if _, ok := v.(map[string]any); !ok {
		return []string{"arguments are not a JSON object"}
	}
	var problems []string
	check(v, schema, "arguments", &problems)
	return problems
}

func check(v any, schema map[string]any, path string, problems *[]string) {
	add := func(format string, args ...any) {
		*problems = append(*problems, path+": "+fmt.Sprintf(format, args...))
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || equalJSON(v, e)
		}
		if !found {
			add("%v is not one of %v", v, enum)
			return
		}
	}
	typ, _ := schema["type"].(string)
	if typ != "" && !hasType(v, typ) {
		add("want %s, got %s", typ, typeName(v))
		return
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if name, ok := r.(string); ok {
					if _, present := x[name]; !present {
						add("missing required %q", name)
					}
				}
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ps, known := props[k].(map[string]any)
			if !known {
				if ap, ok := schema["additionalProperties"].(bool); ok && !ap {
					add("unexpected property %q", k)
				}
				continue
			}
			check(x[k], ps, path+"."+k, problems)
		}
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			for i, e := range x {
				check(e, items, fmt.Sprintf("%s[%d]", path, i), problems)
			}
		}
	case json.Number:
		f, _ := x.Float64()
		if m, ok := number(schema["minimum"]); ok && f < m {
			add("%v is below the minimum %v", f, m)
		}
		if m, ok := number(schema["maximum"]); ok && f > m {
			add("%v is above the maximum %v", f, m)
		}
	}
}

func hasType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f)
	}
	return true // an unknown type constrains nothing
}

func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func equalJSON(a, b any) bool {
	if n, ok := a.(json.Number); ok {
		f, _ := n.Float64()
		g, ok := number(b)
		return ok && f == g
	}
	return a == b
}
