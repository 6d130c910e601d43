package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// scriptedCalculator is a model that solves the calculator scenario the
// way a capable one does (the seed's 5 turns, 4 calls): one operation per
// turn, each taking the previous tool result as its left operand, then the
// answer. It streams like mlx_lm (keepalive, one delta per call, usage,
// [DONE]) and records what each request carried.
type scriptedCalculator struct {
	mu       sync.Mutex
	requests []map[string]any
	headers  []http.Header
}

func (s *scriptedCalculator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	s.requests = append(s.requests, body)
	s.headers = append(s.headers, r.Header.Clone())
	s.mu.Unlock()
	msgs := body["messages"].([]any)
	last := 0.0
	results := 0
	for _, m := range msgs {
		mm := m.(map[string]any)
		if mm["role"] == "tool" {
			results++
			var out struct{ Result float64 }
			_ = json.Unmarshal([]byte(mm["content"].(string)), &out)
			last = out.Result
		}
	}
	steps := []string{
		`{"op": "add", "a": 17, "b": 25}`,
		fmt.Sprintf(`{"op": "multiply", "a": %v, "b": 3}`, last),
		fmt.Sprintf(`{"op": "subtract", "a": %v, "b": 6}`, last),
		fmt.Sprintf(`{"op": "divide", "a": %v, "b": 4}`, last),
	}
	w.Header().Set("Content-Type", "text/event-stream")
	write := func(s string) {
		_, _ = io.WriteString(w, s)
		w.(http.Flusher).Flush()
	}
	write(": keepalive 0/40\n\n")
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "finish_reason": finish, "delta": delta}}})
		write("data: " + string(b) + "\n\n")
	}
	if results < len(steps) {
		args, _ := json.Marshal(steps[results]) // arguments are a JSON string
		var argStr string
		_ = json.Unmarshal(args, &argStr)
		chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
			"index": 0, "id": fmt.Sprintf("call-%d", results), "type": "function",
			"function": map[string]any{"name": "calculator", "arguments": argStr},
		}}}, nil)
		chunk(map[string]any{"role": "assistant"}, "tool_calls")
	} else {
		for _, tok := range []string{"The", " answer", " is", fmt.Sprintf(" %v.", last)} {
			chunk(map[string]any{"role": "assistant", "content": tok}, nil)
		}
		chunk(map[string]any{"role": "assistant"}, "stop")
	}
	write(`data: {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 4}}` + "\n\n")
	write("data: [DONE]\n\n")
}

func TestCalculatorReachesItsAnswer(t *testing.T) {
	model := &scriptedCalculator{}
	srv := httptest.NewServer(model)
	defer srv.Close()
	tg := bench.NewTarget(bench.TargetConfig{BaseURL: srv.URL + "/v1", Trace: true, Timeout: 5 * time.Second, Usage: true})
	defer tg.Close()
	sc, _ := Lookup([]string{"calculator"})
	turns := 0
	rec := RunLoop(context.Background(), tg, sc[0], LoopOptions{ID: "l1", SessionID: "sess-1", MaxTurns: 8, OnTurn: func(int, bench.Result) { turns++ }})
	if !rec.Completed || !rec.Correct || rec.Turns != 5 || rec.ToolCalls != 4 || rec.ValidCalls != 4 || rec.Err != "" {
		t.Fatalf("%+v", rec)
	}
	if turns != 5 || len(rec.TTFTms) != 5 || !strings.Contains(rec.Answer, "30") {
		t.Errorf("turns %d %+v", turns, rec)
	}
	// The whole transcript is re-sent: system + user, then an assistant
	// turn and a tool result more each time; every request streams with
	// the tools, in the loop's session, traced.
	for i, req := range model.requests {
		if n := len(req["messages"].([]any)); n != 2+2*i {
			t.Errorf("request %d has %d messages", i, n)
		}
		if req["stream"] != true || len(req["tools"].([]any)) != 1 {
			t.Errorf("request %d: %v", i, req)
		}
		if h := model.headers[i]; h.Get("X-Session-Id") != "sess-1" || h.Get("X-Mlx-Trace") != "1" {
			t.Errorf("request %d headers %v", i, h)
		}
	}
	lastMsgs := model.requests[4]["messages"].([]any)
	call := lastMsgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	if call["id"] != "call-0" || lastMsgs[3].(map[string]any)["tool_call_id"] != "call-0" {
		t.Errorf("tool call ids not carried: %v / %v", call, lastMsgs[3])
	}
}

// A model that keeps calling tools runs out of turns.
func TestTurnBudget(t *testing.T) {
	model := &scriptedCalculator{}
	srv := httptest.NewServer(model)
	defer srv.Close()
	tg := bench.NewTarget(bench.TargetConfig{BaseURL: srv.URL + "/v1", Timeout: 5 * time.Second})
	defer tg.Close()
	sc, _ := Lookup([]string{"calculator"})
	rec := RunLoop(context.Background(), tg, sc[0], LoopOptions{MaxTurns: 3})
	if rec.Completed || rec.Turns != 3 || rec.ToolCalls != 3 || rec.Err != "turn budget" {
		t.Errorf("%+v", rec)
	}
}

// What the simulated engine can drive: it calls a tool only when the last
// message is the user's and names the tool, so every scenario that names
// one gets exactly one call (with schema-valid arguments), then a text
// answer; the sim's text is not arithmetic, so the answer is not right.
func TestScenariosAgainstMlxsim(t *testing.T) {
	e := mlxsim.New(mlxsim.Options{PrefillTPS: 1e6, DecodeTPS: 1e5}, io.Discard)
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	defer e.Close()
	tg := bench.NewTarget(bench.TargetConfig{BaseURL: srv.URL + "/v1", Timeout: 10 * time.Second, Usage: true})
	defer tg.Close()
	for _, tc := range []struct {
		name         string
		turns, calls int
	}{{"calculator", 2, 1}, {"tri_tool", 2, 1}, {"planner", 1, 0}} {
		sc, _ := Lookup([]string{tc.name})
		rec := RunLoop(context.Background(), tg, sc[0], LoopOptions{MaxTurns: 8, Nonce: "[t] "})
		if !rec.Completed || rec.Turns != tc.turns || rec.ToolCalls != tc.calls || rec.ValidCalls != tc.calls || rec.Correct {
			t.Errorf("%s: %+v", tc.name, rec)
		}
	}
}

func TestLookup(t *testing.T) {
	all, err := Lookup([]string{"all"})
	if err != nil || len(all) != 3 {
		t.Fatal(all, err)
	}
	if _, err := Lookup([]string{"calculator", "chess"}); err == nil {
		t.Error("unknown scenario")
	}
	for _, tc := range []struct {
		answer string
		ok     bool
	}{{"The answer is 30.", true}, {"30", true}, {"It is 30.0", true}, {"300", false}, {"130", false}, {"3.30", false}} {
		if Scenarios[0].Expect.MatchString(tc.answer) != tc.ok {
			t.Errorf("calculator expect %q", tc.answer)
		}
	}
}
