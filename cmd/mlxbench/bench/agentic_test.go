package bench

import "testing"

func TestSummarizeLoops(t *testing.T) {
	loops := []LoopRecord{
		{Scenario: "calculator", Turns: 5, ToolCalls: 4, ValidCalls: 4, Completed: true, Checkable: true, Correct: true, WallMs: 5000, TTFTms: []float64{100, 120, 140, 160, 180}},
		{Scenario: "calculator", Turns: 8, ToolCalls: 8, ValidCalls: 6, Completed: false, Checkable: true, WallMs: 9000, TTFTms: []float64{110, 0}, Err: "turn budget"},
		{Scenario: "planner", Turns: 1, Completed: true, WallMs: 2000, TTFTms: []float64{300}},
		{Scenario: "extra", Turns: 1, Completed: true},
	}
	got := SummarizeLoops([]string{"calculator", "tri_tool", "planner"}, loops)
	if len(got) != 3 || got[0].Scenario != "calculator" || got[1].Scenario != "planner" || got[2].Scenario != "extra" {
		t.Fatalf("order %+v", got)
	}
	c := got[0]
	if c.Loops != 2 || c.Completed != 1 || c.CompletionRate != 0.5 || c.Correct != 1 || c.Checkable != 2 {
		t.Errorf("%+v", c)
	}
	if c.ValidCalls != 10 || c.InvalidCalls != 2 || c.ValidityRate != 10.0/12 || c.Turns.P50 != 6.5 {
		t.Errorf("calls %+v", c)
	}
	if len(c.TurnTTFT) != 5 || c.TurnTTFT[0].N != 2 || c.TurnTTFT[1].N != 1 || c.TurnTTFT[0].P50 != 105 {
		t.Errorf("turn ttft %+v", c.TurnTTFT)
	}
	if c.Errors["turn budget"] != 1 {
		t.Errorf("errors %v", c.Errors)
	}
	if got[1].ValidityRate != 1 {
		t.Error("no calls is full validity")
	}
}
