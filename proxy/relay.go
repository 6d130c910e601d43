package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"time"

	"go.uber.org/zap"
)

// Relaying a completion to the engine and its answer back (taps on the
// answer: tap_body.go, tap_stream.go).

// relayCompletion plans what the proxy asks the engine for (logprobs,
// usage), then relays the request and accounts for it.
func (p *Proxy) relayCompletion(w http.ResponseWriter, r *http.Request, rec *Record, clientBody, body []byte, fields map[string]json.RawMessage, start time.Time) {
	if rec.traced {
		rec.request = requestBody{raw: clientBody, fields: fields}
	}
	if p.live.on() {
		rec.live = p.live.begin(r, fields, start, optedOut(r))
	}
	body = p.planLogprobs(rec, body)
	if rec.Streaming && !rec.Destreamed {
		// planLogprobs leaves a stream it does not destream as it is:
		// fields still describe this body.
		body, rec.UsageInjected = withUsageRequested(body, fields["stream_options"])
	}
	p.begin(rec)
	defer p.end(rec) // also when the relay aborts the response
	if p.router != nil && !p.router.pick(rec, r, fields) {
		p.refuse(w, r, rec, noEngine(rec.Model))
		return
	}

	// The engine's request ends with the client's, or before it when the
	// engine stalls (stall.go).
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	rec.cancelUpstream = cancel
	if d := p.cfg.ClientWriteTimeout; d > 0 {
		w = newDeadlineWriter(w, d, rec)
	}
	out := r.WithContext(context.WithValue(ctx, recordKey{}, rec))
	// The whole body goes upstream with a Content-Length, as mlx_lm
	// answers 411 without one (a chunked client request included).
	out.ContentLength = int64(len(body))
	out.TransferEncoding = nil
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	p.relay.ServeHTTP(w, out)
}

type recordKey struct{}

func recordOf(ctx context.Context) *Record {
	rec, _ := ctx.Value(recordKey{}).(*Record)
	return rec
}

// rewrite sends the request to the engine. Headers pass as the client
// sent them, Authorization included when the proxy has no API keys (it
// never logs or labels it) and left out when it has; hop-by-hop headers
// are dropped, as any HTTP proxy must.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	pr.SetURL(p.upstream)
	if len(p.callers.keys) > 0 {
		pr.Out.Header.Del("Authorization") // the proxy's own credential
	}
	rec := recordOf(pr.In.Context())
	if rec != nil {
		rec.Sent = time.Now()
	}
	if rec != nil && rec.rewritesAnswer() {
		// The proxy reads and rewrites this answer: it must come plain
		// (mlx_lm never compresses; other engines might).
		pr.Out.Header.Del("Accept-Encoding")
	}
	// ReverseProxy drops forwarding headers in Rewrite mode; keep the
	// client's, and add none of ours.
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		if v, ok := pr.In.Header[h]; ok {
			pr.Out.Header[h] = v
		}
	}
}

// onResponse sees the engine's response headers and puts a tap on 2xx
// completion bodies.
func (p *Proxy) onResponse(res *http.Response) error {
	if p.router == nil {
		p.setUp(true) // with several, the router's probes say (route.go)
	}
	stripCORS(res.Header) // the proxy answers CORS itself (caller.go)
	ctx := res.Request.Context()
	rec := recordOf(ctx)
	if rec == nil {
		return nil
	}
	rec.Headers = time.Now()
	rec.Status = res.StatusCode
	if g := p.metrics.vllm; g != nil {
		g.admitted(rec)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 || encoded(res) {
		// Errors pass through untouched; an encoded body cannot be read.
		rec.Outcome = OutcomeComplete
		if res.StatusCode >= 400 && !encoded(res) {
			res.Body = newErrorTap(res.Body, rec)
		}
		return nil
	}
	if rec.rewritesAnswer() && !isEventStream(res) {
		return p.rewriteAnswer(res, rec)
	}
	if isEventStream(res) {
		if rec.UsageInjected || rec.restoreModel != nil || rec.LogprobsSource == SourceStreamed {
			// The client's stream will be shorter than the engine's (no
			// usage chunk, no logprobs in its chunks), or its model name
			// longer.
			res.Header.Del("Content-Length")
			res.ContentLength = -1
		}
		tap := newStreamTap(ctx, res.Body, rec, rec.UsageInjected)
		tap.watchStalls(p.cfg.StreamStallTimeout, rec.cancelUpstream)
		tap.activity = &p.engineActivity
		res.Body = tap
		return nil
	}
	res.Body = newBodyTap(ctx, res.Body, rec)
	return nil
}

func isEventStream(res *http.Response) bool {
	ct := res.Header.Get("Content-Type")
	return len(ct) >= 17 && ct[:17] == "text/event-stream"
}

func encoded(res *http.Response) bool {
	ce := res.Header.Get("Content-Encoding")
	return ce != "" && ce != "identity"
}

// onUpstreamError answers when the engine gave no response: 503 when it
// cannot be reached, 504 when its headers did not come in time, 502 when it
// took the request and closed the connection (mlx_lm does that on a
// validation error it does not catch).
func (p *Proxy) onUpstreamError(w http.ResponseWriter, r *http.Request, err error) {
	rec := recordOf(r.Context())
	if r.Context().Err() != nil {
		if rec != nil {
			rec.Outcome = OutcomeClientGone
		}
		return
	}
	var (
		status  int
		outcome Outcome
		code    string
		msg     string
	)
	var opErr *net.OpError
	var netErr net.Error
	var restream *restreamError
	switch {
	case errors.As(err, &restream):
		// The engine answered, but the proxy cannot give the client the
		// stream it asked for: say so, loudly.
		p.log.Warn("Destreamed answer cannot be re-streamed", zap.String("path", r.URL.Path), zap.Error(err))
		status, outcome, code, msg = http.StatusBadGateway, OutcomeBadGateway, "restream_failed", "mlx upstream answer could not be re-streamed: "+restream.err.Error()
	case errors.As(err, &opErr) && opErr.Op == "dial" && p.router != nil && rec != nil:
		// Neither the engine chosen nor the one retried could be reached.
		p.refuse(w, r, rec, noEngine(rec.Model))
		return
	case errors.As(err, &opErr) && opErr.Op == "dial":
		p.setUp(false)
		status, outcome, code, msg = http.StatusServiceUnavailable, OutcomeUnavailable, "upstream_unavailable", "mlx upstream unavailable"
	case errors.As(err, &netErr) && netErr.Timeout():
		status, outcome, code, msg = http.StatusGatewayTimeout, OutcomeTimeout, "upstream_timeout", "mlx upstream did not answer in time"
	default:
		status, outcome, code, msg = http.StatusBadGateway, OutcomeBadGateway, "upstream_error", "mlx upstream closed the connection without a response"
	}
	p.log.Debug("Upstream request failed", zap.String("path", r.URL.Path), zap.Int("status", status), zap.Error(err))
	p.refuse(w, r, rec, upstreamFailure(status, outcome, code, msg))
}
