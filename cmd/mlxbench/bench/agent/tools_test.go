package agent

import (
	"strings"
	"testing"
)

func TestCall(t *testing.T) {
	offered := []string{"calculator", "convert_currency", "get_weather", "get_time"}
	for _, tc := range []struct {
		name, args string
		want       string
		valid      bool
	}{
		{"calculator", `{"op": "add", "a": 17, "b": 25}`, `{"result":42}`, true},
		{"calculator", `{"op": "multiply", "a": 42, "b": 3}`, `{"result":126}`, true},
		{"calculator", `{"op": "subtract", "a": 126, "b": 6}`, `{"result":120}`, true},
		{"calculator", `{"op": "divide", "a": 120, "b": 4}`, `{"result":30}`, true},
		{"calculator", `{"op": "divide", "a": 1, "b": 3}`, `{"result":0.3333333333333333}`, true},
		{"calculator", `{"op": "divide", "a": 1, "b": 0}`, `{"error":"division by zero"}`, true},
		{"calculator", `{"op": "add", "a": 1}`, `missing required`, false},
		{"convert_currency", `{"amount": 200, "from": "USD", "to": "JPY"}`, `{"amount":29000,"currency":"JPY"}`, true},
		{"convert_currency", `{"amount": 100, "from": "EUR", "to": "USD"}`, `{"amount":108.7,"currency":"USD"}`, true},
		{"get_time", `{"city": "Tokyo"}`, `{"city":"Tokyo","local_time":"2026-08-22T16:00:00+09:00"}`, true},
		{"create_task", `{"title": "x"}`, `unknown tool`, false},
		{"rm_rf", `{}`, `unknown tool`, false},
	} {
		got, problems := Call(offered, tc.name, tc.args)
		if (len(problems) == 0) != tc.valid || !strings.Contains(got, tc.want) {
			t.Errorf("%s %s: %s %v", tc.name, tc.args, got, problems)
		}
	}
	// Deterministic: the same call gives the same answer.
	a, _ := Call(offered, "get_weather", `{"city": "Paris", "unit": "fahrenheit"}`)
	b, _ := Call(offered, "get_weather", `{"city": "Paris", "unit": "fahrenheit"}`)
	if a != b || !strings.Contains(a, `"unit":"fahrenheit"`) {
		t.Errorf("%s / %s", a, b)
	}
}
