package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
)

// LoopOptions configures one agent loop.
type LoopOptions struct {
	ID        string
	Run       int
	Agent     int
	SessionID string
	// Nonce prefixes the user's message (cache busting across loops; the
	// turns of one loop share their prefix, as a real agent's do).
	Nonce       string
	MaxTurns    int
	MaxTokens   int
	Temperature float64
	// OnTurn sees each turn's request (1-based turn), to record it.
	OnTurn func(turn int, r bench.Result)
}

// RunLoop runs a scenario until the model answers without a tool call,
// the turn budget is spent, or a request fails. Every turn streams and
// re-sends the whole transcript, tools included.
func RunLoop(ctx context.Context, t *bench.Target, sc Scenario, o LoopOptions) bench.LoopRecord {
	rec := bench.LoopRecord{ID: o.ID, Scenario: sc.Name, Run: o.Run, Agent: o.Agent, SessionID: o.SessionID, Checkable: sc.Expect != nil}
	var tools []openai.ChatCompletionToolUnionParam
	for _, name := range sc.Tools {
		tools = append(tools, Registry[name].Param())
	}
	var msgs []openai.ChatCompletionMessageParamUnion
	if sc.System != "" {
		msgs = append(msgs, openai.SystemMessage(sc.System))
	}
	msgs = append(msgs, openai.UserMessage(o.Nonce+sc.User))
	maxTurns := max(1, o.MaxTurns)
	start := time.Now()
	defer func() { rec.WallMs = float64(time.Since(start).Microseconds()) / 1000 }()
	for turn := 1; turn <= maxTurns; turn++ {
		if ctx.Err() != nil {
			rec.Err = bench.CauseCancelled
			return rec
		}
		res := t.Do(ctx, bench.Call{
			Messages: msgs, Tools: tools, Stream: true,
			MaxTokens: o.MaxTokens, Temperature: o.Temperature, SessionID: o.SessionID,
		}, time.Now())
		rec.Turns = turn
		ttft := 0.0
		if !res.FirstOut.IsZero() {
			ttft = float64(res.FirstOut.Sub(res.Sched).Microseconds()) / 1000
		}
		rec.TTFTms = append(rec.TTFTms, ttft)
		if o.OnTurn != nil {
			o.OnTurn(turn, res)
		}
		if res.Err != nil {
			rec.Err = res.Cause
			return rec
		}
		if len(res.ToolCalls) == 0 {
			rec.Completed = true
			rec.Answer = clip(res.Content, 400)
			rec.Correct = sc.Expect != nil && sc.Expect.MatchString(res.Content)
			return rec
		}
		msgs = append(msgs, assistantWithCalls(res, turn))
		for i, c := range res.ToolCalls {
			rec.ToolCalls++
			out, problems := Call(sc.Tools, c.Name, c.Arguments)
			if len(problems) == 0 {
				rec.ValidCalls++
			} else {
				rec.Invalid = append(rec.Invalid, fmt.Sprintf("turn %d %s: %s", turn, c.Name, problems[0]))
			}
			msgs = append(msgs, openai.ToolMessage(out, callID(c, turn, i)))
		}
	}
	rec.Err = "turn budget"
	return rec
}

// assistantWithCalls is the model's turn as the transcript re-sends it.
func assistantWithCalls(res bench.Result, turn int) openai.ChatCompletionMessageParamUnion {
	a := openai.ChatCompletionAssistantMessageParam{}
	if res.Content != "" {
		a.Content.OfString = openai.String(res.Content)
	}
	for i, c := range res.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       callID(c, turn, i),
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments},
			},
		})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// callID is the call's id, or one made up when the server sent none.
func callID(c bench.ToolCall, turn, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("call_%d_%d", turn, i)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
