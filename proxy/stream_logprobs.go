package proxy

import (
	"bytes"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/sse"
)

// Scoring streams from their chunks (confidence.score_streams).
//
// A stream that did not ask for logprobs goes upstream with "logprobs":
// true and "top_logprobs": N, as a non-streamed request does. An engine
// that streams logprobs sends them per chunk, in the chunk's choice; the
// tap reads them into the record (the scorer scores them when the stream
// ends) and takes them out of the chunk before the client gets it, so the
// client's bytes are those the engine would have sent unasked:
//
//   - mlx_lm's generate_response adds choices[0]["logprobs"] only when
//     there are logprobs to send (mlx_lm v0.31.3 server.py,
//     APIHandler.generate_response), before
//     "delta"/"text" and after "finish_reason": the member is removed with
//     its separator, leaving {"index": 0, "finish_reason": null, "delta":
//     {...}}, the chunk it sends unasked;
//   - OpenAI-style servers (entries with "bytes") send "logprobs": null
//     unasked: the value becomes null (confidence.StripLogprobsKeep has the
//     rules, shared with non-streamed answers).
//
// mlx_lm itself (0.31.3, and its main branch as of 2026-08) sends no
// logprobs in stream chunks at all: the streamed generate_response calls
// pass none (v0.31.3 server.py, APIHandler.handle_completion), although
// the tokens' logprobs are computed, and with top_logprobs > 0 a top-N list
// is built for every token (ResponseGenerator._generate and _serve_single,
// _format_top_logprobs) and then
// dropped (ml-explore/mlx-lm#1630 would have streamed them; it was closed
// unmerged). Its chunks are the same asked or not, so nothing is taken
// out, but the asking costs the engine work for nothing: the first stream
// that ends complete, with output and without a single logprob, makes the
// proxy stop asking streams for streamLogprobsRetry, after which one
// stream asks again (an engine upgraded in place). Such a stream counts in
// mlx_confidence_unscored_total{source="streamed"}; destream_fraction is
// the way to score some of mlx_lm's streams.

// streamLogprobsRetry is how long the proxy stops asking streams for
// logprobs after the engine sent a stream without any.
const streamLogprobsRetry = 10 * time.Minute

// streamLogprobsProbe remembers whether the engine streams logprobs.
type streamLogprobsProbe struct {
	// silentUntil: the engine's last answered stream carried no logprobs;
	// streams are not asked for them until then (Unix nanoseconds; 0 while
	// the engine is not known to send none).
	silentUntil atomic.Int64
}

// due: streams asked for logprobs now may get them.
func (s *streamLogprobsProbe) due(now time.Time) bool {
	until := s.silentUntil.Load()
	if until == 0 || now.UnixNano() >= until {
		return true
	}
	return false
}

// noteStreamLogprobs learns from a finished stream the proxy asked for
// logprobs whether the engine streams them.
func (p *Proxy) noteStreamLogprobs(rec *Record) {
	if rec.LogprobsSource != SourceStreamed || rec.Outcome != OutcomeComplete || rec.ChunksUnread > 0 {
		return
	}
	output, logprobs := false, false
	for _, c := range rec.Choices {
		output = output || c.Text.Len() > 0 || c.Reasoning.Len() > 0 || len(c.ToolCalls) > 0
		logprobs = logprobs || len(c.Logprobs) > 0
	}
	switch {
	case logprobs:
		if p.streamLogprobs.silentUntil.Swap(0) != 0 {
			p.log.Info("The engine sends logprobs in stream chunks again: streams are scored")
		}
	case output:
		if p.streamLogprobs.silentUntil.Swap(rec.End.Add(streamLogprobsRetry).UnixNano()) == 0 {
			p.log.Info("The engine sends no logprobs in stream chunks (mlx_lm does not): streams are not scored; "+
				"confidence.destream_fraction scores a share of them", zap.Duration("asking_again_in", streamLogprobsRetry))
		}
	}
}

// logprobsKey is how a chunk with logprobs says so; a chunk without it has
// nothing to take out and is not walked.
var logprobsKey = []byte(`"logprobs"`)

// appendStripped appends to dst the event as the client gets it: without
// the logprobs the proxy asked for. ok is false when they could not be
// taken out (the event has several data lines, or its data is not one
// JSON object): dst then gets the event as it is. data is the event's
// data as appended (it aliases dst). keep (reset first) gets what was
// taken out, each choice's logprobs value (slices of ev.Data,
// confidence.Kept); none when nothing was.
func appendStripped(dst []byte, ev sse.Event, keep *confidence.Kept) (out, data []byte, ok bool) {
	keep.Values = keep.Values[:0]
	if !bytes.Contains(ev.Data, logprobsKey) {
		return append(dst, ev.Raw...), ev.Data, true
	}
	if ev.DataAt < 0 {
		return append(dst, ev.Raw...), ev.Data, false
	}
	at := len(dst)
	dst = append(dst, ev.Raw[:ev.DataAt]...)
	start := len(dst)
	dst, err := confidence.AppendStripLogprobsKeep(dst, ev.Data, keep)
	if err != nil {
		return append(dst[:at], ev.Raw...), ev.Data, false
	}
	data = dst[start:len(dst):len(dst)]
	return append(dst, ev.Raw[ev.DataAt+len(ev.Data):]...), data, true
}
