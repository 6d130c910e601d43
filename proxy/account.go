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
			acc.Upstream, acc.UpstreamNode = rec.Upstream, rec.UpstreamNode
		}
		p.access.offer(acc)
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
	if p.router != nil {
		p.router.end(rec)
	}
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
