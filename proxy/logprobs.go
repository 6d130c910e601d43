package proxy

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/confidence"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/wire"
)

// How the proxy gets logprobs to score (mlx_confidence_scored_total{source}):
//
//   - client: the client asked; the answer passes through untouched.
//   - injected: a non-streamed completion that did not ask gets
//     "logprobs": true, "top_logprobs": N upstream, and the logprobs are
//     taken out of the answer before the client sees it.
//   - destreamed: a sampled share of streamed chat requests goes upstream
//     non-streamed (mlx_lm sends logprobs only there) with logprobs asked
//     for, and the answer reaches the client re-emitted as a stream.
//   - streamed: any other stream that did not ask gets them injected too,
//     while the engine sends logprobs in stream chunks (score_streams);
//     they are scored from the chunks and taken out of each chunk
//     (stream_logprobs.go).

// planLogprobs decides the source of a parsed completion request and
// returns the body to send upstream.
func (p *Proxy) planLogprobs(rec *Record, body []byte) []byte {
	if !rec.RequestParsed || !rec.scoredOrigin() {
		return body // only users' answers are scored (origin.go)
	}
	n := p.cfg.TopLogprobs
	switch {
	case rec.ClientLogprobs:
		// Also for a stream: engines other than mlx_lm send them per chunk.
		rec.LogprobsSource = SourceClient
	case n <= 0:
	case !rec.Streaming:
		if out, changed, err := confidence.InjectLogprobs(body, n); err == nil && changed {
			rec.LogprobsSource = SourceInjected
			return out
		}
	case rec.Route == RouteChat && p.cfg.DestreamFraction > 0 && rand.Float64() < p.cfg.DestreamFraction:
		out, err := jsonedit.Set(body, jsonedit.First, jsonedit.KV{Key: "stream", Value: []byte("false")})
		if err != nil {
			return body
		}
		out, changed, err := confidence.InjectLogprobs(out, n)
		if err != nil || !changed {
			// A logprobs value the engine will refuse: let it refuse the
			// request as the client sent it.
			return body
		}
		rec.LogprobsSource, rec.Destreamed = SourceDestreamed, true
		return out
	case p.cfg.ScoreStreams && p.streamLogprobs.due(time.Now()):
		if out, changed, err := confidence.InjectLogprobs(body, n); err == nil && changed {
			rec.LogprobsSource = SourceStreamed
			return out
		}
	}
	return body
}

// maxRewrittenAnswer bounds the answer the proxy reads whole to take the
// injected logprobs out or to re-stream it. mlx_lm's answers are far
// smaller (a 1,000-token answer with top-5 lists is about 350 kB).
const maxRewrittenAnswer = 64 << 20

// rewriteAnswer reads a 2xx non-streamed answer whole, records it, and
// replaces the body with what the client gets: the answer without the
// injected logprobs (with its new Content-Length), or the answer as a
// stream. An error makes the relay answer 502 (or nothing, when the
// client went away).
func (p *Proxy) rewriteAnswer(res *http.Response, rec *Record) error {
	body, err := readAnswerBody(io.LimitReader(res.Body, maxRewrittenAnswer+1), res.ContentLength)
	if err != nil {
		res.Body.Close()
		return fmt.Errorf("reading the answer: %w", err)
	}
	if len(body) > maxRewrittenAnswer {
		if rec.Destreamed {
			res.Body.Close()
			return &restreamError{fmt.Errorf("the answer is larger than %d bytes", maxRewrittenAnswer)}
		}
		// Too large to strip: the client gets it as it is, logprobs
		// included, rather than not at all.
		p.log.Warn("Answer too large to take the injected logprobs out; relayed as it is", zap.Int("limit_bytes", maxRewrittenAnswer))
		res.Body = newBodyTap(res.Request.Context(), readCloser{io.MultiReader(bytes.NewReader(body), res.Body), res.Body}, rec)
		return nil
	}
	res.Body.Close()
	body = restoreModel(body, rec.restoreModel)

	var (
		out  []byte
		kept confidence.Kept // the injected logprobs, per choice, when taken out
	)
	if rec.Destreamed {
		if out, err = destream(body, rec.includeUsage); err != nil {
			return &restreamError{err}
		}
		res.Header.Set("Content-Type", "text/event-stream")
		res.Header.Set("Cache-Control", "no-cache")
		res.Header.Del("Content-Length")
		res.ContentLength = -1
	} else {
		out = body
		if rec.LogprobsSource == SourceInjected || rec.LogprobsSource == SourceStreamed {
			if out, kept, err = confidence.StripLogprobsKeep(body); err != nil {
				out = body // not one JSON object: nothing was added to it
			}
		}
		res.Header.Set("Content-Length", strconv.Itoa(len(out)))
		res.ContentLength = int64(len(out))
	}
	recordAnswer(rec, body, out, kept)
	rec.responseRead = true
	res.Body = newBodyTap(res.Request.Context(), io.NopCloser(bytes.NewReader(out)), rec)
	return nil
}

// recordAnswer records a non-streamed answer. With the injected logprobs
// taken out (kept: each choice's, from the same pass), it decodes the
// client's answer, a fraction of the engine's, with the logprobs kept
// (wire.DecodeStripped); where that could differ from decoding the engine's
// answer, it decodes the engine's answer.
func recordAnswer(rec *Record, body, out []byte, kept confidence.Kept) {
	var c wire.Completion
	if kept.Values != nil && wire.DecodeStripped(&c, body, out, kept, nil) {
		rec.applyResponse(&c)
		return
	}
	c = wire.Completion{}
	if wire.Decode(body, &c) == nil {
		rec.applyResponse(&c)
	}
}

// readAnswerBody reads the whole answer into one buffer sized by the engine's
// Content-Length (up to 1 MiB; the engine is the proxy's own, but a size it
// declares is not trusted further), instead of growing it from 512 bytes.
func readAnswerBody(r io.Reader, contentLength int64) ([]byte, error) {
	if contentLength <= 0 || contentLength > 1<<20 {
		return io.ReadAll(r)
	}
	// ReadFrom grows the buffer when less than MinRead is free.
	buf := bytes.NewBuffer(make([]byte, 0, contentLength+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

// restreamError: the engine answered a destreamed request, but not with a
// completion the proxy can turn into a stream.
type restreamError struct{ err error }

func (e *restreamError) Error() string { return "cannot re-stream the answer: " + e.err.Error() }
func (e *restreamError) Unwrap() error { return e.err }

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}
