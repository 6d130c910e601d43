package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// refusal is an error answer of the proxy's own, in OpenAI's error shape
// ({"error": {"message", "type", "param", "code"}}, so clients' SDKs show
// the message instead of a parse failure): its status, OpenAI's error
// type and code, the request member at fault, the headers it needs, the
// outcome it gives the request's record and the series it is counted in.
// The constructors below name every kind; Proxy.refuse writes one.
type refusal struct {
	status  int
	typ     string // OpenAI's error type
	code    string
	param   string // the request member at fault; "" is null
	message string

	outcome Outcome
	// upstream: an answer the engine failed to give (502, 503, 504), which
	// the request series count as the request ends (Metrics.End), not a
	// refusal of the proxy's own.
	upstream bool
	// closing makes the answer the connection's last (lastAnswer): it
	// comes before the body was read whole.
	closing      bool
	retryAfter   bool   // Retry-After: 1
	authenticate bool   // 401: WWW-Authenticate asks for a bearer token
	allow        string // 405: the Allow header
}

// The error types OpenAI answers with.
const (
	errInvalidRequest = "invalid_request_error"
	errRateLimit      = "rate_limit_exceeded"
	errServer         = "server_error"
)

// invalidRequest is a refusal of the request itself (OpenAI's
// invalid_request_error), counted in mlx_http_refusals_total.
func invalidRequest(status int, code, param, message string) refusal {
	return refusal{status: status, typ: errInvalidRequest, code: code, param: param, message: message, outcome: OutcomeRefused}
}

// badRequest is a 400 naming the member at fault; the second result says
// there is one, as the checks (allow.go, params.go) return it.
func badRequest(code, param, format string, args ...any) (refusal, bool) {
	return invalidRequest(http.StatusBadRequest, code, param, fmt.Sprintf(format, args...)), true
}

// modelNotFound: a model the front door does not serve.
func modelNotFound(message string) refusal {
	return invalidRequest(http.StatusNotFound, "model_not_found", "model", message)
}

// invalidJSON: a body json.loads would not take.
func invalidJSON(err error) refusal {
	return invalidRequest(http.StatusBadRequest, "invalid_json", "", err.Error())
}

// unsupportedMediaType: a body not sent as JSON.
func unsupportedMediaType(message string) refusal {
	return invalidRequest(http.StatusUnsupportedMediaType, "unsupported_media_type", "", message).closed()
}

// bodyTooLarge: a body over its bound; the record's outcome says so.
func bodyTooLarge(message string) refusal {
	return invalidRequest(http.StatusRequestEntityTooLarge, "request_too_large", "", message).closed().as(OutcomeTooLarge)
}

// bodyTimeout: a body that did not arrive in time.
func bodyTimeout(message string) refusal {
	return invalidRequest(http.StatusRequestTimeout, "request_timeout", "", message).closed()
}

// malformedBody: a body that cannot be framed (a malformed chunk).
func malformedBody(message string) refusal {
	return invalidRequest(http.StatusBadRequest, "malformed_body", "", message).closed()
}

// incompleteBody: a body cut short, a client gone while sending it.
func incompleteBody(message string) refusal {
	return invalidRequest(http.StatusBadRequest, "incomplete_body", "", message).closed().as(OutcomeClientGone)
}

// unauthorized: a caller without a key, or with a wrong one (401, asking
// for a bearer token).
func unauthorized(code, message string) refusal {
	r := invalidRequest(http.StatusUnauthorized, code, "", message).closed()
	r.authenticate = true
	return r
}

// forbidden: a caller, browser origin or Host the front door does not let
// in.
func forbidden(code, message string) refusal {
	return invalidRequest(http.StatusForbidden, code, "", message).closed()
}

// tooManyRequests: no request slot (429, retry after a second).
func tooManyRequests(message string) refusal {
	r := refusal{status: http.StatusTooManyRequests, typ: errRateLimit, code: "too_many_requests", message: message,
		outcome: OutcomeRefused, closing: true, retryAfter: true}
	return r
}

// methodNotAllowed: a method a known route does not take; allow is the
// Allow header.
func methodNotAllowed(allow, message string) refusal {
	r := invalidRequest(http.StatusMethodNotAllowed, "method_not_allowed", "", message)
	r.allow = allow
	return r
}

// routeNotFound: a path the server does not answer.
func routeNotFound(message string) refusal {
	return invalidRequest(http.StatusNotFound, "not_found", "", message)
}

// unavailable: the proxy cannot take the request now (503 server_error,
// retry after a second).
func unavailable(code, message string) refusal {
	return refusal{status: http.StatusServiceUnavailable, typ: errServer, code: code, message: message,
		outcome: OutcomeRefused, retryAfter: true}
}

// noEngine: no engine that serves the model is up (several upstreams,
// route.go): 503, retry after a second; the request series count it as
// unavailable, as an engine that cannot be reached.
func noEngine(model string) refusal {
	r := upstreamFailure(http.StatusServiceUnavailable, OutcomeUnavailable, "no_upstream_available",
		fmt.Sprintf("No engine that serves the model %q is available now.", truncateLabel(model)))
	r.retryAfter = true
	return r
}

// upstreamFailure: the engine did not answer (502, 503, 504), with the
// outcome the record takes; the request series count it.
func upstreamFailure(status int, outcome Outcome, code, message string) refusal {
	return refusal{status: status, typ: errServer, code: code, message: message, outcome: outcome, upstream: true}
}

// ptr is r for a result that may be none (nil).
func (r refusal) ptr() *refusal { return &r }

// as is r giving the record another outcome than OutcomeRefused.
func (r refusal) as(outcome Outcome) refusal {
	r.outcome = outcome
	return r
}

// closed is r as the connection's last answer.
func (r refusal) closed() refusal {
	r.closing = true
	return r
}

// refuse writes ref to w, gives the record (nil: not a completion) its
// status and outcome, and counts it. An upstream failure is counted as
// the request ends. A refusal changes nothing but its own counters:
// mlx_http_refusals_total (by the record's route, other without one), and
// the caller's mlx_client_requests_total once the caller is known. It is
// not a request of the service: not in mlx_requests_total or
// mlx_error_total (which the SLO rules read), not in a latency histogram
// or mlx_in_flight, and no entry of the feedback index (there is no answer
// to judge), so a flood of refusals neither dilutes the error ratio nor
// evicts real answers.
//
// A span is made only for a request that was admitted (its caller let in,
// a request slot taken) and then refused for its body (415, 413, 408, 400,
// the checks of allow.go): that caller got X-Mlx-Trace-Id and finds the
// refusal, with its error, where it looks for its requests. A caller that
// was not let in, or got 429, is given no trace id and makes no span: an
// unauthenticated flood cannot fill the span queue, Jaeger or Opik.
func (p *Proxy) refuse(w http.ResponseWriter, r *http.Request, rec *Record, ref refusal) {
	ref.write(w, r)
	switch {
	case rec == nil && !ref.upstream:
		p.metrics.refused(RouteOther, ref.status)
	case rec == nil:
	case ref.upstream:
		rec.Status, rec.Outcome = ref.status, ref.outcome
	default:
		rec.Outcome, rec.Status, rec.End = ref.outcome, ref.status, time.Now()
		p.metrics.refused(rec.Route, ref.status)
		p.metrics.countClient(rec)
		if rec.admitted && rec.traced {
			if span := p.tracer.start(rec); span != nil {
				rec.spanCtx = span.span.Context
				span.finishLater()
			}
		}
	}
}

// write sends the answer: its headers, then the body.
func (ref refusal) write(w http.ResponseWriter, r *http.Request) {
	if ref.closing {
		lastAnswer(w, r)
	}
	h := w.Header()
	if ref.retryAfter {
		h.Set("Retry-After", "1")
	}
	if ref.authenticate {
		h.Set("WWW-Authenticate", `Bearer realm="mlx-otelcol"`)
	}
	if ref.allow != "" {
		h.Set("Allow", ref.allow)
	}
	body := ref.body()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(ref.status)
	_, _ = w.Write(body)
}

// body is the answer's body in OpenAI's error shape.
func (ref refusal) body() []byte {
	var param any
	if ref.param != "" {
		param = ref.param
	}
	b, _ := json.Marshal(map[string]any{
		"error": map[string]any{
			"message": ref.message,
			"type":    ref.typ,
			"param":   param,
			"code":    ref.code,
		},
	})
	return b
}
