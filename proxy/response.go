package proxy

import (
	"iter"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/wire"
)

// usageOf is what the record keeps of an answer's usage.
func usageOf(u *wire.Usage) *Usage {
	out := &Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil {
		out.CachedTokens, out.HasCached = *d.CachedTokens, true
	}
	if d := u.CompletionTokensDetails; d != nil && d.ReasoningTokens != nil {
		out.ReasoningTokens, out.HasReasoning = *d.ReasoningTokens, true
	}
	return out
}

// applyChunk adds one streamed chunk to the record. now is when it arrived.
func (r *Record) applyChunk(c *wire.Completion, now time.Time) {
	var arena *byteArena
	if c.LogprobsLent {
		arena = &r.logprobsArena
	}
	output := false
	defer func() {
		if output {
			r.noteOutput(now)
		}
	}()
	for cj, ch := range r.apply(c) {
		text := cj.Text
		if cj.Delta != nil {
			text = cj.Delta.Content
			if rs := cj.Delta.Reasoning; rs != nil && *rs != "" {
				output = true
				ch.appendReasoning(*rs)
				if r.FirstOutput.IsZero() {
					r.FirstOutput = now
				}
				if r.FirstChunk.IsZero() {
					r.FirstChunk = now
				}
			}
			r.addToolCalls(ch, cj.Delta.ToolCalls)
			if len(cj.Delta.ToolCalls) > 0 && r.FirstChunk.IsZero() {
				r.FirstChunk = now
			}
		}
		if text != nil && *text != "" {
			output = true
			ch.appendText(*text)
			if r.FirstOutput.IsZero() {
				r.FirstOutput = now
			}
			if r.FirstChunk.IsZero() {
				r.FirstChunk = now
			}
			if r.FirstContent.IsZero() {
				r.FirstContent = now
			}
		}
		if cj.FinishReason != nil && *cj.FinishReason != "" {
			ch.FinishReason = *cj.FinishReason
		}
		// Engines that stream logprobs send them per chunk.
		ch.addLogprobs(cj.Logprobs, arena)
	}
}

// apply is how a response and a chunk are read alike: it keeps what they
// say of the whole answer (its id and model, which every chunk repeats, and
// the usage), then yields each choice with the choice's record; a choice
// past maxChoices is left out.
func (r *Record) apply(c *wire.Completion) iter.Seq2[*wire.Choice, *Choice] {
	return func(yield func(*wire.Choice, *Choice) bool) {
		if r.ResponseID == "" && c.ID != "" {
			r.ResponseID = c.ID
		}
		if r.ResponseModel == "" && c.Model != "" {
			r.ResponseModel = c.Model
		}
		if c.Usage != nil {
			r.Usage = usageOf(c.Usage)
		}
		for i := range c.Choices {
			cj := &c.Choices[i]
			if ch := r.choice(cj.Index); ch != nil && !yield(cj, ch) {
				return
			}
		}
	}
}

// applyResponse adds a non-streamed response to the record.
func (r *Record) applyResponse(c *wire.Completion) {
	for cj, ch := range r.apply(c) {
		if cj.Text != nil {
			ch.appendText(*cj.Text)
		}
		if m := cj.Message; m != nil {
			if m.Content != nil {
				ch.appendText(*m.Content)
			}
			if m.Reasoning != nil {
				ch.appendReasoning(*m.Reasoning)
			}
			r.addToolCalls(ch, m.ToolCalls)
		}
		if cj.FinishReason != nil {
			ch.FinishReason = *cj.FinishReason
		}
		ch.addLogprobs(cj.Logprobs, nil)
	}
}

// addToolCalls records the calls of one message or delta. mlx_lm sends a
// whole call in one delta; OpenAI-style servers stream a call in pieces
// with the same index, the name only in the first. A call is new when its
// index (else its id) was not seen in this choice; later pieces add to its
// arguments.
func (r *Record) addToolCalls(ch *Choice, calls []wire.ToolCall) {
	for i := range calls {
		tc := &calls[i]
		if tc.Index != nil {
			if pos, ok := ch.toolByIndex[*tc.Index]; ok && (tc.ID == "" || tc.ID == ch.ToolCalls[pos].ID) {
				call := &ch.ToolCalls[pos]
				if len(call.Arguments)+len(tc.Function.Arguments) > maxToolArguments {
					call.ArgumentsCut = true
				} else {
					call.Arguments += tc.Function.Arguments
				}
				if call.Name == "" {
					call.Name = tc.Function.Name
				}
				continue
			}
		}
		if len(ch.ToolCalls) >= maxToolCallsPerChoice {
			continue
		}
		ch.ToolCalls = append(ch.ToolCalls, ToolCall{ID: tc.ID, Type: tc.Type, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		if tc.Index != nil {
			if ch.toolByIndex == nil {
				ch.toolByIndex = map[int]int{}
			}
			ch.toolByIndex[*tc.Index] = len(ch.ToolCalls) - 1
		}
	}
}

// maxToolCallsPerChoice bounds what one answer can make the proxy keep.
const maxToolCallsPerChoice = 256
