package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
)

// Route says what kind of request the proxy relayed.
type Route int

const (
	// RouteOther is everything that is not a completion: /v1/models,
	// /health, OPTIONS, unknown paths. Relayed, never counted.
	RouteOther Route = iota
	// RouteChat is POST /v1/chat/completions (or /chat/completions).
	RouteChat
	// RouteText is POST /v1/completions.
	RouteText
)

// Kind label values.
const (
	KindChat      = "chat"
	KindReasoning = "reasoning"
)

// Outcome is how a completion request ended.
type Outcome int

const (
	// OutcomePending: the request has not ended yet.
	OutcomePending Outcome = iota
	// OutcomeComplete: the engine answered and the whole answer reached the
	// client (for a stream: up to `data: [DONE]`). The status may be an
	// error status the engine chose.
	OutcomeComplete
	// OutcomeIncomplete: the answer ended before it was whole: a stream
	// closed (the engine failed or died) before `data: [DONE]`, or a body
	// cut short.
	OutcomeIncomplete
	// OutcomeClientGone: the client went away before the answer was
	// complete; the upstream request was cancelled.
	OutcomeClientGone
	// OutcomeUnavailable: the engine could not be reached (503).
	OutcomeUnavailable
	// OutcomeBadGateway: the engine took the request but gave no valid
	// response (502).
	OutcomeBadGateway
	// OutcomeTimeout: no response headers within the upstream response
	// header timeout (504).
	OutcomeTimeout
	// OutcomeTooLarge: the body was over the limit (413); nothing went
	// upstream.
	OutcomeTooLarge
	// OutcomeRefused: the proxy refused the request itself (a caller it
	// does not let in, a model it does not serve, adapters, a draft model,
	// too many requests in progress, a body too slow or malformed);
	// nothing went upstream. A refused request reaches no recorder
	// (account.go, refuse).
	OutcomeRefused
)

var outcomeNames = [...]string{"pending", "complete", "incomplete", "client_gone", "unavailable", "bad_gateway", "timeout", "too_large", "refused"}

func (o Outcome) String() string { return outcomeNames[o] }

// Record is everything the proxy learns about one completion request. The
// relay fills it while the request runs (one goroutine, no locking);
// recorders read it when the request has ended. It is the single place
// later analyses (confidence from logprobs, output heuristics, spans) read
// from, so it keeps the output text and logprobs, never only aggregates.
type Record struct {
	// Facts are what the request's span is made of as well, each set
	// where it is learned: the span takes them as they are when the
	// request has ended (span.go, factsOf), with what is derived then.
	span.Facts

	Route Route

	// RequestParsed is false when the body was not a JSON object (it went
	// upstream as is).
	RequestParsed bool
	// UsageInjected: the proxy asked the engine for the usage chunk the
	// client did not ask for, and removes it from the client's stream.
	UsageInjected bool
	// ToolResults: the conversation holds a message with role "tool" (an
	// answer may rest on its results).
	ToolResults bool
	// ClientLogprobs: the client asked for logprobs (logprobs true, or
	// top_logprobs above 0).
	ClientLogprobs bool
	// responseRead: the proxy read the whole answer itself (to strip or
	// re-stream it); the relay's tap must not read it again.
	responseRead bool
	// restoreModel is the client's model name (JSON) where the engine was
	// sent "default_model" for it (allow.go, oneModelName); nil otherwise.
	restoreModel []byte
	// includeUsage: a streamed request's client asked for the usage chunk
	// (stream_options.include_usage).
	includeUsage bool

	// routed is the engine the request went to, with several
	// (route.go); nil with one.
	routed *routeChoice
	// inFlightLabel is the model label mlx_in_flight was raised under.
	inFlightLabel string
	// vllmPhase is the vLLM gauge the request is counted in
	// (vllm_compat.go).
	vllmPhase int
	// cancelUpstream cancels the engine's request (a stalled stream).
	cancelUpstream context.CancelFunc
	// Stalled is "engine" when the engine's stream stopped for
	// StreamStallTimeout, "client" when the client stopped reading for
	// ClientWriteTimeout; "" otherwise.
	Stalled string
	// EventCut: a stream event grew past maxStreamEvent before it ended;
	// its bytes went to the client unread.
	EventCut bool
	// ChunksUnread counts the chunks of a stream with logprobs asked for by
	// the proxy that it could not read or take the logprobs out of: they
	// reached the client as the engine sent them, and the stream is not
	// scored for confidence.
	ChunksUnread int

	// Timings beside the span's (Facts), from the proxy's clock. Zero
	// when the moment never came.
	// Sent: the request went to the engine (the body read and rewritten).
	Sent        time.Time
	FirstOutput time.Time // first streamed chunk with content or reasoning text
	// lastOutput is the latest streamed chunk with text; gaps are the
	// times between such chunks (at most maxGaps), in seconds.
	lastOutput time.Time
	gaps       []float32

	Outcome Outcome
	// SawDone: a stream carried `data: [DONE]`.
	SawDone bool

	// Choices are the answer's choices as assembled from its chunks.
	Choices []*Choice

	// Tracing (trace.go). traced: a span is due for this request; parent
	// is its trace context (a client's traceparent, or none). request is
	// the client's body and its members as parseRequest read them, kept
	// for the span's attributes; span is the started span until the
	// scorer takes it over.
	traced  bool
	ids     requestIDs // chosen on arrival (traceid.go); zero when untraced
	parent  context.Context
	request requestBody
	span    *pendingSpan
	spanCtx trace.SpanContext
	// admitted: the caller was let in and the request took a slot
	// (admit.go); a refusal after that makes a span (account.go).
	admitted bool
	// indexed is the request as feedback finds it (feedback_index.go),
	// from begin; nil when feedback is not taken or it is untraced.
	indexed *tracedRequest
	// live is the request's live stream, nil while no pipeline takes it.
	live *liveStream
	// logprobsArena holds the logprobs values of a stream's chunks, which
	// the stream tap reads from its buffer (response.go, applyChunk).
	logprobsArena byteArena
}

// answeredWithReasoning: a choice of the answer carries reasoning text.
func (r *Record) answeredWithReasoning() bool {
	for _, c := range r.Choices {
		if c.Reasoning.Len() > 0 {
			return true
		}
	}
	return false
}

// maxGaps bounds the inter-token gaps a request keeps.
const maxGaps = 8192

// noteOutput: a streamed chunk with text arrived at now.
func (r *Record) noteOutput(now time.Time) {
	if !r.lastOutput.IsZero() && len(r.gaps) < maxGaps {
		r.gaps = append(r.gaps, float32(now.Sub(r.lastOutput).Seconds()))
	}
	r.lastOutput = now
}

// requestBody is the client's request body and its top-level members (nil
// when it is not a JSON object).
type requestBody struct {
	raw    []byte
	fields map[string]json.RawMessage
}

// Usage is the response's token accounting (the span reads it as it is).
type Usage = span.Usage

// Choice is one choice of the answer, assembled from all its chunks.
type Choice struct {
	Index int
	// Text is the message content (chat) or text (completion), capped at
	// maxAssembledText bytes; TextTruncated says the cap was hit.
	Text          strings.Builder
	Reasoning     strings.Builder
	TextTruncated bool
	FinishReason  string // "" when the engine gave none
	ToolCalls     []ToolCall
	// Logprobs are the choice's logprobs values as the engine sent them:
	// one for a non-streamed answer (mlx_lm only sends them there), one per
	// chunk from engines that stream them. At most maxLogprobsBytes.
	Logprobs      []json.RawMessage
	logprobsBytes int

	toolByIndex map[int]int // streamed tool call index -> position in ToolCalls
}

// ToolCall is one function call the model made (the span reads it as it
// is).
type ToolCall = span.ToolCall

// maxToolArguments bounds the arguments a streamed tool call assembles:
// a server that streams them piece by piece decides their length.
const maxToolArguments = 1 << 20

// rewritesAnswer: the proxy reads this request's answer whole and changes
// it before the client sees it (takes injected logprobs out, or re-streams
// a destreamed answer).
func (r *Record) rewritesAnswer() bool {
	return r.Destreamed || r.LogprobsSource == SourceInjected || r.LogprobsSource == SourceStreamed || r.restoreModel != nil
}

// Where an answer's logprobs come from (mlx_confidence_scored_total{source}).
const (
	SourceClient     = "client"
	SourceInjected   = "injected"
	SourceDestreamed = "destreamed"
	// SourceStreamed: a stream that did not ask, asked for logprobs by the
	// proxy and scored from its chunks, which reach the client without
	// them (stream_logprobs.go).
	SourceStreamed = "streamed"
)

// maxLogprobsBytes bounds the logprobs kept per choice (about 50,000
// tokens with top-5 lists); past it the rest is not scored.
const maxLogprobsBytes = 16 << 20

// addLogprobs keeps one logprobs value of the choice; with a, a copy of
// it in a (raw is a slice of a buffer that is reused).
func (c *Choice) addLogprobs(raw json.RawMessage, a *byteArena) {
	if len(raw) == 0 || isNull(raw) || c.logprobsBytes+len(raw) > maxLogprobsBytes {
		return
	}
	if a != nil {
		raw = a.copy(raw)
	}
	c.logprobsBytes += len(raw)
	c.Logprobs = append(c.Logprobs, raw)
}

// maxAssembledText bounds the memory one choice's text may take.
const maxAssembledText = 1 << 20

// Err reports whether the request counts as an error, and its class
// ("4xx" or "5xx"). A stream that ended early counts as a 5xx although
// its status was 200: the engine failed it. A client that went away is not
// an error of the service.
func (r *Record) Err() (class string, isErr bool) {
	switch {
	case r.Outcome == OutcomeClientGone:
		return "", false
	case r.Outcome == OutcomeIncomplete:
		return "5xx", true
	case r.Status >= 500:
		return "5xx", true
	case r.Status >= 400:
		return "4xx", true
	}
	return "", false
}

// choice returns the choice with this index, adding it if new. Indexes
// past maxChoices are not kept.
func (r *Record) choice(index int) *Choice {
	if index < 0 || index >= maxChoices {
		return nil
	}
	for _, c := range r.Choices {
		if c.Index == index {
			return c
		}
	}
	c := &Choice{Index: index}
	r.Choices = append(r.Choices, c)
	return c
}

// maxChoices bounds the choices kept per request (mlx_lm only ever sends 1).
const maxChoices = 16

func (c *Choice) appendText(s string) {
	if c.Text.Len()+len(s) > maxAssembledText {
		c.TextTruncated = true
		return
	}
	c.Text.WriteString(s)
}

func (c *Choice) appendReasoning(s string) {
	if c.Reasoning.Len()+len(s) > maxAssembledText {
		return
	}
	c.Reasoning.WriteString(s)
}

// Recorder receives every completion request. Begin is called once the
// request is parsed, before it goes upstream; End once the client has its
// answer (or the request failed). Both run on the request's goroutine and
// must not keep the record after End returns.
type Recorder interface {
	Begin(rec *Record)
	End(rec *Record)
}
