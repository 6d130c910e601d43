package bench

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Call is one chat completion to send.
type Call struct {
	Messages    []openai.ChatCompletionMessageParamUnion
	Tools       []openai.ChatCompletionToolUnionParam
	MaxTokens   int
	Temperature float64
	Stream      bool
	// SessionID is sent as X-Session-Id (agent loops), so the loop's
	// requests can be found together in the trace store.
	SessionID string
}

// Result is what one request did, with the times it happened at.
type Result struct {
	// Sched is when the request should have started (open loop) or
	// started (closed loop); latencies are measured from it.
	Sched time.Time
	// Sent is when it was handed to the HTTP client.
	Sent time.Time
	// FirstOut is when the first chunk with output arrived (zero if none
	// or not streamed); End when the answer was complete or failed.
	FirstOut time.Time
	End      time.Time
	// ITL are the gaps between consecutive output chunks.
	ITL []time.Duration

	Content      string
	Reasoning    string
	ToolCalls    []ToolCall
	FinishReason string
	Usage        *Usage
	OutputChunks int
	Keepalives   int
	Fingerprint  string
	Server       string
	Stream       bool

	Status int
	Err    error
	Cause  string
}

// OutputTokens is the completion token count: the usage's when the server
// sent one, else the output chunks (one token each on mlx_lm).
func (r Result) OutputTokens() int {
	if r.Usage != nil {
		return r.Usage.CompletionTokens
	}
	return r.OutputChunks
}

// Do sends call and reads the answer, timing it from sched. A streamed
// answer is read event by event (see SSEReader): comments are counted as
// keepalives, output chunks timed, the usage chunk read, and an answer
// that ends without "data: [DONE]" is a broken stream. ctx is the run's:
// its cancellation makes the result "cancelled"; the per-request timeout
// is Do's own.
func (t *Target) Do(ctx context.Context, call Call, sched time.Time) (res Result) {
	res = Result{Sched: sched, Stream: call.Stream}
	rctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	defer func() {
		t.saw(&res)
		if res.End.IsZero() {
			res.End = time.Now()
		}
		if res.Err != nil {
			if rctx.Err() == context.DeadlineExceeded && ctx.Err() == nil && !errors.Is(res.Err, context.DeadlineExceeded) {
				res.Err = errors.Join(res.Err, context.DeadlineExceeded)
			}
			res.Cause = Cause(res.Err, ctx.Err() != nil)
		}
	}()

	params := openai.ChatCompletionNewParams{
		Model:       t.cfg.Model,
		Messages:    call.Messages,
		Temperature: openai.Float(call.Temperature),
		Tools:       call.Tools,
	}
	if call.MaxTokens > 0 {
		params.MaxTokens = openai.Int(int64(call.MaxTokens))
	}
	var opts []option.RequestOption
	if call.SessionID != "" {
		opts = append(opts, option.WithHeader("X-Session-Id", call.SessionID))
	}
	if call.Stream {
		opts = append(opts, option.WithJSONSet("stream", true))
		if t.cfg.Usage {
			opts = append(opts, option.WithJSONSet("stream_options", map[string]any{"include_usage": true}))
		}
	}
	var raw *http.Response
	res.Sent = time.Now()
	err := t.client.Post(rctx, "chat/completions", params, &raw, opts...)
	if raw != nil {
		res.Status = raw.StatusCode
		res.Server = raw.Header.Get("Server")
	}
	if err != nil {
		res.Err = err
		return res
	}
	defer raw.Body.Close()
	if call.Stream {
		res.Err = readStream(raw.Body, &res)
	} else {
		res.Err = readWhole(raw.Body, &res)
	}
	return res
}

// readWhole reads a non-streamed completion.
func readWhole(body io.Reader, res *Result) error {
	b, err := io.ReadAll(body)
	res.End = time.Now()
	if err != nil {
		return err
	}
	c, err := ParseChunk(b)
	if err != nil {
		return &StreamError{Reason: err.Error()}
	}
	if c.Error != "" {
		return &StreamError{Reason: "error in body: " + c.Error}
	}
	res.Content, res.Reasoning = c.Content, c.Reasoning
	var acc ToolCallAccumulator
	acc.Add(c.ToolCalls)
	res.ToolCalls = acc.Calls()
	res.FinishReason = c.FinishReason
	res.Usage = c.Usage
	res.Fingerprint = c.Fingerprint
	if c.HasOutput() {
		res.OutputChunks = 1
	}
	return nil
}

// readStream reads an SSE answer up to "data: [DONE]".
func readStream(body io.Reader, res *Result) error {
	r := NewSSEReader(body)
	var content, reasoning strings.Builder
	var acc ToolCallAccumulator
	var last time.Time
	defer func() {
		res.Content, res.Reasoning = content.String(), reasoning.String()
		res.ToolCalls = acc.Calls()
	}()
	for {
		ev, err := r.Next()
		now := time.Now()
		if err != nil {
			res.End = now
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return &StreamError{Reason: "ended without data: [DONE]"}
			}
			return err
		}
		if ev.Kind == SSEComment {
			res.Keepalives++
			continue
		}
		if ev.Data == "[DONE]" {
			res.End = now
			return nil
		}
		c, err := ParseChunk([]byte(ev.Data))
		if err != nil {
			res.End = now
			return &StreamError{Reason: err.Error()}
		}
		if c.Error != "" {
			res.End = now
			return &StreamError{Reason: "error event: " + c.Error}
		}
		if c.Fingerprint != "" {
			res.Fingerprint = c.Fingerprint
		}
		if c.Usage != nil {
			res.Usage = c.Usage
		}
		if c.FinishReason != "" {
			res.FinishReason = c.FinishReason
		}
		if c.HasOutput() {
			if res.FirstOut.IsZero() {
				res.FirstOut = now
			} else {
				res.ITL = append(res.ITL, now.Sub(last))
			}
			last = now
			res.OutputChunks++
			content.WriteString(c.Content)
			reasoning.WriteString(c.Reasoning)
			acc.Add(c.ToolCalls)
		}
	}
}
