package agent

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
)

// Tool is a function the model may call, answered locally and the same
// way every time, so a run measures the model and the server, not a
// network service.
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any
	Run         func(args map[string]any) (any, error)
}

// Param is the tool as a request's tools entry.
func (t Tool) Param() openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        t.Name,
		Description: openai.String(t.Description),
		Parameters:  shared.FunctionParameters(t.Parameters),
	})
}

func obj(required []string, props map[string]any) map[string]any {
	req := make([]any, len(required))
	for i, r := range required {
		req[i] = r
	}
	return map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false}
}

func prop(typ, desc string, extra ...any) map[string]any {
	p := map[string]any{"type": typ, "description": desc}
	for i := 0; i+1 < len(extra); i += 2 {
		p[extra[i].(string)] = extra[i+1]
	}
	return p
}

var currencies = []any{"USD", "EUR", "JPY", "GBP"}

// perUSD are the registry's fixed exchange rates.
var perUSD = map[string]float64{"USD": 1, "EUR": 0.92, "JPY": 145, "GBP": 0.79}

// Registry is every tool a scenario can offer.
var Registry = map[string]Tool{
	"calculator": {
		Name:        "calculator",
		Description: "Apply one arithmetic operation to two numbers and return the result.",
		Parameters: obj([]string{"op", "a", "b"}, map[string]any{
			"op": prop("string", "The operation", "enum", []any{"add", "subtract", "multiply", "divide"}),
			"a":  prop("number", "The left operand"),
			"b":  prop("number", "The right operand"),
		}),
		Run: func(args map[string]any) (any, error) {
			a, b := num(args["a"]), num(args["b"])
			var r float64
			switch args["op"] {
			case "add":
				r = a + b
			case "subtract":
				r = a - b
			case "multiply":
				r = a * b
			case "divide":
				if b == 0 {
					return nil, fmt.Errorf("division by zero")
				}
				r = a / b
			}
			return map[string]any{"result": json.Number(strconv.FormatFloat(r, 'f', -1, 64))}, nil
		},
	},
	"get_weather": {
		Name:        "get_weather",
		Description: "Current weather for a city.",
		Parameters: obj([]string{"city"}, map[string]any{
			"city": prop("string", "City name, e.g. Tokyo"),
			"unit": prop("string", "Temperature unit", "enum", []any{"celsius", "fahrenheit"}),
		}),
		Run: func(args map[string]any) (any, error) {
			city, _ := args["city"].(string)
			c := 10 + int(hash(strings.ToLower(city))%20)
			sky := []string{"sunny", "cloudy", "light rain", "clear"}[hash(city+"sky")%4]
			t, unit := float64(c), "celsius"
			if args["unit"] == "fahrenheit" {
				t, unit = float64(c)*9/5+32, "fahrenheit"
			}
			return map[string]any{"city": city, "temperature": t, "unit": unit, "sky": sky}, nil
		},
	},
	"get_time": {
		Name:        "get_time",
		Description: "Local date and time in a city.",
		Parameters: obj([]string{"city"}, map[string]any{
			"city": prop("string", "City name, e.g. Tokyo"),
		}),
		Run: func(args map[string]any) (any, error) {
			city, _ := args["city"].(string)
			offsets := map[string]int{"tokyo": 9, "paris": 2, "berlin": 2, "lisbon": 1, "london": 1, "san francisco": -7, "new york": -4}
			off, ok := offsets[strings.ToLower(city)]
			if !ok {
				off = int(hash(strings.ToLower(city))%24) - 11
			}
			h := (7 + off + 24) % 24 // 07:00 UTC on the registry's fixed day
			return map[string]any{"city": city, "local_time": fmt.Sprintf("2026-08-22T%02d:00:00%+03d:00", h, off)}, nil
		},
	},
	"convert_currency": {
		Name:        "convert_currency",
		Description: "Convert an amount between currencies at today's rate.",
		Parameters: obj([]string{"amount", "from", "to"}, map[string]any{
			"amount": prop("number", "The amount to convert"),
			"from":   prop("string", "Currency code", "enum", currencies),
			"to":     prop("string", "Currency code", "enum", currencies),
		}),
		Run: func(args map[string]any) (any, error) {
			from, _ := args["from"].(string)
			to, _ := args["to"].(string)
			r := num(args["amount"]) / perUSD[from] * perUSD[to]
			r = math.Round(r*100) / 100
			return map[string]any{"amount": json.Number(strconv.FormatFloat(r, 'f', -1, 64)), "currency": to}, nil
		},
	},
	"create_task": {
		Name:        "create_task",
		Description: "Add a task to the user's task list.",
		Parameters: obj([]string{"title"}, map[string]any{
			"title":    prop("string", "Short title"),
			"due_date": prop("string", "ISO date"),
		}),
		Run: func(args map[string]any) (any, error) {
			title, _ := args["title"].(string)
			return map[string]any{"id": fmt.Sprintf("T-%d", hash(title)%1000), "created": true}, nil
		},
	},
	"list_tasks": {
		Name:        "list_tasks",
		Description: "List the user's open tasks.",
		Parameters:  obj(nil, map[string]any{}),
		Run: func(map[string]any) (any, error) {
			return map[string]any{"tasks": []any{}}, nil
		},
	},
}

func num(v any) float64 {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case float64:
		return x
	}
	return 0
}

func hash(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}

// Call runs a tool call: the result as the tool message's JSON text, and
// whether the call was valid (a tool of the scenario, its arguments
// parsing and matching the schema). An invalid call gets an error object
// back, as an agent harness would answer, so the model can try again.
func Call(offered []string, name, arguments string) (result string, problems []string) {
	known := false
	for _, o := range offered {
		known = known || o == name
	}
	tool, ok := Registry[name]
	if !known || !ok {
		return errJSON("unknown tool " + strconv.Quote(name)), []string{"unknown tool " + strconv.Quote(name)}
	}
	if problems := CheckArguments(arguments, tool.Parameters); len(problems) > 0 {
		return errJSON(strings.Join(problems, "; ")), problems
	}
	dec := json.NewDecoder(strings.NewReader(arguments))
	dec.UseNumber()
	var args map[string]any
	_ = dec.Decode(&args)
	out, err := tool.Run(args)
	if err != nil {
		// A valid call the tool refuses (division by zero) is still valid.
		return errJSON(err.Error()), nil
	}
	b, _ := json.Marshal(out)
	return string(b), nil
}

func errJSON(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}
