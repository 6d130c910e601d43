package mlxsim

import (
	"math/rand/v2"
	"strings"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim/pyjson"
)

// Tool calling. The rule: the request has tools, its last message is a user
// message, and that message's text contains a tool's function name
// (case-insensitive). The first such tool in the request's order is called,
// once, with every property listed in its parameters' "required" filled with
// a plausible value for its schema (enum: one of its values; string: a value
// that fits the property name; integer: 3 or the minimum; number: 1.5;
// boolean: true; array: one item; object: its own required properties).
//
// The model writes the call as Qwen3 does, and the server turns it into
// {"function": {"name", "arguments": <json.dumps(..., ensure_ascii=False)>},
// "type": "function", "id": <uuid4>} (+ "index" when streaming), the whole
// call in one delta, with finish_reason "tool_calls".

// toolFunction returns tool["function"] as a dict, if it is one.
func toolFunction(t any) *pyjson.Dict {
	d, ok := t.(*pyjson.Dict)
	if !ok {
		return nil
	}
	if f, ok := d.Get("function"); ok {
		if fd, ok := f.(*pyjson.Dict); ok {
			return fd
		}
	}
	return nil
}

func toolName(t any) string {
	f := toolFunction(t)
	if f == nil {
		return ""
	}
	n, _ := f.Get("name")
	s, _ := n.(string)
	return s
}

func triggeredTool(g genRequest) any {
	if !g.chat || len(g.tools) == 0 || len(g.msgs) == 0 {
		return nil
	}
	last := g.msgs[len(g.msgs)-1]
	if last.role != "user" {
		return nil
	}
	text := strings.ToLower(last.contentString())
	for _, t := range g.tools {
		if n := toolName(t); n != "" && strings.Contains(text, strings.ToLower(n)) {
			return t
		}
	}
	return nil
}

// toolCallJSON is the text the model writes between <tool_call> tags.
func toolCallJSON(r *rand.Rand, tool any, userText string) string {
	f := toolFunction(tool)
	name := toolName(tool)
	var params *pyjson.Dict
	if p, ok := f.Get("parameters"); ok {
		params, _ = p.(*pyjson.Dict)
	}
	args := fillObject(r, params, userText, 0)
	return pyjson.DumpsNoASCII(pyjson.NewDict("name", name, "arguments", args))
}

func fillObject(r *rand.Rand, schema *pyjson.Dict, userText string, depth int) *pyjson.Dict {
	out := pyjson.NewDict()
	if schema == nil {
		return out
	}
	props, _ := schema.GetDefault("properties", nil).(*pyjson.Dict)
	req, _ := schema.GetDefault("required", nil).([]any)
	for _, k := range req {
		name, ok := k.(string)
		if !ok {
			continue
		}
		var ps *pyjson.Dict
		if props != nil {
			ps, _ = props.GetDefault(name, nil).(*pyjson.Dict)
		}
		out.Set(name, fillValue(r, name, ps, userText, depth+1))
	}
	return out
}

func schemaType(s *pyjson.Dict) string {
	switch t := s.GetDefault("type", nil).(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if xs, ok := x.(string); ok && xs != "null" {
				return xs
			}
		}
	}
	return ""
}

func fillValue(r *rand.Rand, name string, s *pyjson.Dict, userText string, depth int) any {
	if s == nil {
		return stringFor(r, name, userText)
	}
	if e, ok := s.GetDefault("enum", nil).([]any); ok && len(e) > 0 {
		return e[r.IntN(len(e))]
	}
	if depth > 8 {
		return nil
	}
	switch schemaType(s) {
	case "integer":
		if m, ok := s.GetDefault("minimum", nil).(pyjson.Int); ok {
			return m
		}
		return 1 + r.IntN(5)
	case "number":
		return float64(1+r.IntN(40)) / 4
	case "boolean":
		return true
	case "null":
		return nil
	case "array":
		items, _ := s.GetDefault("items", nil).(*pyjson.Dict)
		return []any{fillValue(r, strings.TrimSuffix(name, "s"), items, userText, depth+1)}
	case "object":
		return fillObject(r, s, userText, depth)
	}
	return stringFor(r, name, userText)
}

func stringFor(r *rand.Rand, name, userText string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "city"), strings.Contains(n, "location"), strings.Contains(n, "place"):
		return []string{"Paris", "Tokyo", "San Francisco", "Berlin", "Lisbon"}[r.IntN(5)]
	case strings.Contains(n, "unit"):
		return "celsius"
	case strings.Contains(n, "date"):
		return "2026-08-22"
	case strings.Contains(n, "time"):
		return "16:00"
	case strings.Contains(n, "url"), strings.Contains(n, "link"):
		return "https://example.com"
	case strings.Contains(n, "email"):
		return "user@example.com"
	case strings.Contains(n, "lang"):
		return "en"
	case strings.Contains(n, "path"), strings.Contains(n, "file"):
		return "/tmp/notes.txt"
	case strings.Contains(n, "name"):
		return []string{"Alice", "Bob", "Carol"}[r.IntN(3)]
	case strings.Contains(n, "query"), strings.Contains(n, "search"), n == "q", strings.Contains(n, "text"), strings.Contains(n, "prompt"):
		words := strings.Fields(userText)
		if len(words) > 6 {
			words = words[len(words)-6:]
		}
		if len(words) == 0 {
			return "latest news"
		}
		return strings.Trim(strings.Join(words, " "), "?!.")
	}
	return "example"
}
