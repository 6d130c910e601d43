package proxy

import (
	"net/http"
	"time"
)

// Accounting for a request: its recorders (metrics, scorer, span, live
// stream) and its access record.

// logAccess wraps w so that the request's access record is offered when
// the returned function runs.
func (p *Proxy) logAccess(w http.ResponseWriter, r *http.Request, rec *Record, who *caller, start time.Time) (http.ResponseWriter, func()) {
	acc := newAccessRecord(r, start)
	sw := &statusWriter{ResponseWriter: w}
	return sw, func() {
		acc.End, acc.Status = time.Now(), sw.status
		acc.Client = who.client
		if rec != nil {
			if rec.Status != 0 {
				acc.Status = rec.Status
			}
			if rec.spanCtx.IsValid() {
				acc.TraceID, acc.SpanID = rec.spanCtx.TraceID(), rec.spanCtx.SpanID()
			}
		}
		p.access.offer(acc)
	}
}

// refuse accounts for a completion the proxy answered itself, its status
// already written: nothing went to the engine. A refusal changes nothing
// but its own counters: mlx_http_refusals_total, and the caller's
// mlx_client_requests_total once the caller is known. It is not a request
// of the service: not in mlx_requests_total or mlx_error_total (which the
// SLO rules read), not in a latency histogram or mlx_in_flight, and no
// entry of the feedback index (there is no answer to judge), so a flood of
// refusals neither dilutes the error ratio nor evicts real answers.
//
// A span is made only for a request that was admitted (its caller let in,
// a request slot taken) and then refused for its body (415, 413, 408, 400,
// the checks of allow.go): that caller got X-Mlx-Trace-Id and finds the
// refusal, with its error, where it looks for its requests. A caller that
// was not let in, or got 429, is given no trace id and makes no span: an
// unauthenticated flood cannot fill the span queue, Jaeger or Opik.
func (p *Proxy) refuse(rec *Record, status int) { p.refuseAs(rec, OutcomeRefused, status) }

// refuseAs is refuse with another outcome than OutcomeRefused (a body too
// large, a client gone while sending it), as the span tells it.
func (p *Proxy) refuseAs(rec *Record, outcome Outcome, status int) {
	rec.Outcome, rec.Status, rec.End = outcome, status, time.Now()
	p.metrics.refused(rec.Route, status)
	p.metrics.countClient(rec)
	if rec.admitted && rec.traced {
		if span := p.tracer.start(rec); span != nil {
			rec.spanCtx = span.span.Context
			span.finishLater()
		}
	}
}

func (p *Proxy) begin(rec *Record) {
	p.active.Add(1)
	// Indexed now, as its ids are known: the client may give feedback the
	// moment it has its answer, before end has run.
	p.feedback.remember(rec)
	for _, r := range p.recorders {
		r.Begin(rec)
	}
}

func (p *Proxy) end(rec *Record) {
	rec.End = time.Now()
	if rec.Kind == KindChat && rec.answeredWithReasoning() {
		// A model that thinks by default (Qwen3 since mlx-lm 0.31.2)
		// reasons without the request asking: the answer says so.
		rec.Kind = KindReasoning
	}
	if rec.Outcome == OutcomeComplete && rec.Status >= 200 && rec.Status < 300 {
		p.engineAnswered.Store(rec.End.UnixNano())
	}
	if rec.Outcome == OutcomePending {
		// The relay stopped without reaching the end of the answer and
		// without an upstream error: writing to the client failed.
		rec.Outcome = OutcomeClientGone
	}
	p.noteStreamLogprobs(rec)
	if rec.traced {
		// Started here, finished by the scorer's worker (it takes it).
		if rec.span = p.tracer.start(rec); rec.span != nil {
			rec.spanCtx = rec.span.span.Context
		}
	}
	p.feedback.answered(rec)
	for _, r := range p.recorders {
		r.End(rec)
	}
	if rec.live != nil {
		rec.live.end(rec)
	}
	p.active.Add(-1)
}
