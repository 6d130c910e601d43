package agent

import (
	"fmt"
	"regexp"
	"strings"
)

// Scenario is one agent task: what the user asks, which tools are
// offered, and what a right answer contains.
type Scenario struct {
	Name   string
	System string
	User   string
	Tools  []string
	// Expect matches a right final answer (nil: not checkable).
	Expect *regexp.Regexp
	// Turns and Calls are what a capable model does: the seed's figures
	// for Qwen on mlx_lm (calculator 5 turns / 4 calls, tri_tool 2 / 3,
	// planner no tool call). For reading, not asserted.
	Turns, Calls int
}

const agentSystem = "You are a careful assistant. Use the provided tools when the user asks you to, " +
	"one tool call per step unless told otherwise, and answer in plain text when you are done."

// Scenarios are the three of bench_agentic.py, in order.
var Scenarios = []Scenario{
	{
		Name:   "calculator",
		System: agentSystem,
		User: "What is ((17 + 25) * 3 - 6) / 4? Use the calculator tool for every arithmetic step, " +
			"one operation per call, and then state the final number.",
		Tools:  []string{"calculator"},
		Expect: regexp.MustCompile(`(^|[^0-9.])30(\.0+)?([^0-9]|$)`),
		Turns:  5, Calls: 4,
	},
	{
		Name:   "tri_tool",
		System: agentSystem,
		User: "I land in Tokyo tonight. Call get_weather for Tokyo, get_time for Tokyo and convert_currency " +
			"for 200 USD to JPY, all three at once, then summarise what you found in two sentences.",
		Tools:  []string{"get_weather", "get_time", "convert_currency"},
		Expect: regexp.MustCompile(`29[,.  ]?000`),
		Turns:  2, Calls: 3,
	},
	{
		Name:   "planner",
		System: agentSystem,
		User: "Draft a three-step plan for upgrading a production PostgreSQL database with minimal downtime. " +
			"Answer in prose.",
		Tools: []string{"create_task", "list_tasks"},
		Turns: 1, Calls: 0,
	},
}

// Lookup returns the named scenarios ("all" = every one).
func Lookup(names []string) ([]Scenario, error) {
	var out []Scenario
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "all" {
			return Scenarios, nil
		}
		found := false
		for _, s := range Scenarios {
			if s.Name == n {
				out = append(out, s)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown scenario %q (calculator, tri_tool, planner or all)", n)
		}
	}
	return out, nil
}
