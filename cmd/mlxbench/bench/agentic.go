package bench

import "sort"

// AgenticSummary is what an agentic run reports besides its per-turn
// request figures (one level per scenario): each loop, and per scenario
// the outcomes bench_agentic.py reported.
type AgenticSummary struct {
	Scenarios []ScenarioSummary `json:"scenarios"`
	Loops     []LoopRecord      `json:"loops"`
}

// LoopRecord is one agent loop: a scenario run to its answer or its turn
// budget.
type LoopRecord struct {
	ID        string `json:"id"`
	Scenario  string `json:"scenario"`
	Run       int    `json:"run"`
	Agent     int    `json:"agent"`
	SessionID string `json:"session_id"`
	// Turns is the number of model calls; ToolCalls the calls the model
	// made, ValidCalls those whose name is a tool of the scenario and
	// whose arguments parse and match its schema.
	Turns      int      `json:"turns"`
	ToolCalls  int      `json:"tool_calls"`
	ValidCalls int      `json:"valid_calls"`
	Invalid    []string `json:"invalid,omitempty"`
	// Completed: the model answered without a tool call within the turn
	// budget. Correct: the answer holds the scenario's expected text
	// (scenarios without one leave it false and Checkable false).
	Completed bool      `json:"completed"`
	Checkable bool      `json:"checkable"`
	Correct   bool      `json:"correct"`
	WallMs    float64   `json:"wall_ms"`
	TTFTms    []float64 `json:"ttft_ms"` // per turn (NaN-free: 0 = none)
	Answer    string    `json:"answer,omitempty"`
	Err       string    `json:"err,omitempty"`
}

// ScenarioSummary sums the loops of one scenario.
type ScenarioSummary struct {
	Scenario       string  `json:"scenario"`
	Loops          int     `json:"loops"`
	Completed      int     `json:"completed"`
	CompletionRate float64 `json:"completion_rate"`
	Correct        int     `json:"correct"`
	Checkable      int     `json:"checkable"`
	Turns          Pcts    `json:"turns"`
	ToolCalls      Pcts    `json:"tool_calls"`
	ValidCalls     int     `json:"valid_calls"`
	InvalidCalls   int     `json:"invalid_calls"`
	// ValidityRate is valid / all tool calls (1 when there were none).
	ValidityRate float64 `json:"validity_rate"`
	Wall         Pcts    `json:"wall_ms"`
	// TurnTTFT is the TTFT distribution of each turn (index 0 = turn 1):
	// it grows as the re-sent transcript grows.
	TurnTTFT []Pcts         `json:"turn_ttft_ms"`
	Errors   map[string]int `json:"errors,omitempty"`
}

// SummarizeLoops groups loops by scenario (in the order given).
func SummarizeLoops(order []string, loops []LoopRecord) []ScenarioSummary {
	by := map[string][]LoopRecord{}
	for _, l := range loops {
		by[l.Scenario] = append(by[l.Scenario], l)
	}
	names := append([]string(nil), order...)
	for n := range by {
		found := false
		for _, o := range order {
			found = found || o == n
		}
		if !found {
			names = append(names, n)
		}
	}
	sort.SliceStable(names[len(order):], func(i, j int) bool { return names[len(order)+i] < names[len(order)+j] })
	var out []ScenarioSummary
	for _, name := range names {
		ls := by[name]
		if len(ls) == 0 {
			continue
		}
		s := ScenarioSummary{Scenario: name, Loops: len(ls)}
		var turns, calls, wall []float64
		var perTurn [][]float64
		for _, l := range ls {
			if l.Completed {
				s.Completed++
			}
			if l.Checkable {
				s.Checkable++
				if l.Correct {
					s.Correct++
				}
			}
			if l.Err != "" {
				if s.Errors == nil {
					s.Errors = map[string]int{}
				}
				s.Errors[l.Err]++
			}
			turns = append(turns, float64(l.Turns))
			calls = append(calls, float64(l.ToolCalls))
			wall = append(wall, l.WallMs)
			s.ValidCalls += l.ValidCalls
			s.InvalidCalls += l.ToolCalls - l.ValidCalls
			for i, v := range l.TTFTms {
				for len(perTurn) <= i {
					perTurn = append(perTurn, nil)
				}
				if v > 0 {
					perTurn[i] = append(perTurn[i], v)
				}
			}
		}
		s.CompletionRate = float64(s.Completed) / float64(s.Loops)
		s.ValidityRate = 1
		if all := s.ValidCalls + s.InvalidCalls; all > 0 {
			s.ValidityRate = float64(s.ValidCalls) / float64(all)
		}
		s.Turns, s.ToolCalls, s.Wall = Distribution(turns), Distribution(calls), Distribution(wall)
		for _, v := range perTurn {
			s.TurnTTFT = append(s.TurnTTFT, Distribution(v))
		}
		out = append(out, s)
	}
	return out
}
