package proxy

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// Feedback from people: POST /v1/feedback on the proxy's port names a
// traced answer (by X-Mlx-Trace-Id and X-Mlx-Span-Id, by the trace id
// alone when no other indexed answer shares it, or by the answer's id)
// and gives it a verdict (thumbs, or a score 0-1) and maybe a comment. The
// proxy counts it (mlx_user_feedback_total{value}) and hands a record to
// the collector side (the mlx_proxy receiver, records: feedback), which
// makes it a gen_ai.evaluation.result event; the opik exporter writes that
// as the trace's `user_feedback` score. The caller is admitted as for the
// API (caller.go). Feedback is idempotent per answer: the same verdict
// again changes nothing, another one is refused (409), so the counter, the
// event and Opik's score agree. An agent framework puts every call of a
// run in one trace (its traceparent): a trace id alone that names several
// answers is refused (409 ambiguous_trace) rather than guessed.

// FeedbackPath is the feedback route.
const FeedbackPath = "/v1/feedback"

// FeedbackScoreName is the Opik score and evaluation name of feedback.
const FeedbackScoreName = "user_feedback"

// FeedbackLogger is the instrumentation scope of feedback records.
const FeedbackLogger = "mlx.proxy.feedback"

// FeedbackConfig bounds feedback (key `feedback`).
type FeedbackConfig struct {
	// MaxTraces is how many of the latest traced requests feedback can
	// name; an older one is 404.
	MaxTraces int `mapstructure:"max_traces"`
	// MaxCommentBytes bounds a comment; a longer one is 400.
	MaxCommentBytes int `mapstructure:"max_comment_bytes"`
	// QueueSize is how many feedback records may wait for the logs
	// pipeline; past it a record is dropped (mlx_user_feedback_dropped_total)
	// and its client answered 503 with Retry-After, so that it retries.
	QueueSize int `mapstructure:"queue_size"`
}

func (c *FeedbackConfig) validate() []error {
	var errs []error
	if c.MaxTraces < 1 || c.MaxTraces > 1_000_000 {
		errs = append(errs, fmt.Errorf("feedback.max_traces: must be 1 to 1000000, got %d", c.MaxTraces))
	}
	if c.MaxCommentBytes < 0 || c.MaxCommentBytes > maxFeedbackBody/2 {
		errs = append(errs, fmt.Errorf("feedback.max_comment_bytes: must be 0 to %d, got %d", maxFeedbackBody/2, c.MaxCommentBytes))
	}
	if c.QueueSize < 1 {
		errs = append(errs, fmt.Errorf("feedback.queue_size: must be at least 1, got %d", c.QueueSize))
	}
	return errs
}

// maxFeedbackBody bounds a feedback request's body.
const maxFeedbackBody = 16 << 10

// FeedbackRecord is one person's feedback on one traced request.
type FeedbackRecord struct {
	Time time.Time
	// TraceID and SpanID are the request's span; OpikTraceID is its Opik
	// trace (internal/opikid, as the opik exporter minted it).
	TraceID     trace.TraceID
	SpanID      trace.SpanID
	OpikTraceID string
	// Name is FeedbackScoreName; Score is 0-1; Label the verdict (up,
	// down, low, mid, high).
	Name  string
	Score float64
	Label string
	// Comment is the person's comment ("" without one, or when content is
	// not captured: traces.capture_content).
	Comment    string
	ResponseID string
	Model      string
	// Client is the caller's client label.
	Client string
}

// FeedbackSink takes the proxy's feedback records, likewise.
type FeedbackSink func(ctx context.Context, records []*FeedbackRecord) error

// AttachFeedback makes sink the consumer of feedback: from now on traced
// requests are indexed and POST /v1/feedback is answered.
func (p *Proxy) AttachFeedback(sink FeedbackSink) (detach func(context.Context)) {
	return p.feedback.outbox.attach(sink)
}

// feedback is the proxy's part of feedback: the index and the outbox.
type feedback struct {
	cfg     FeedbackConfig
	index   *feedbackIndex
	outbox  *outbox[*FeedbackRecord]
	counted *prometheus.CounterVec
	content bool // comments may leave the machine (capture_content)
}

// The verdicts (mlx_user_feedback_total{value}).
const (
	verdictUp   = "up"
	verdictDown = "down"
)

// remember indexes a traced request as it begins (its ids and start are
// its span's: traceid.go), while a pipeline takes feedback.
func (f *feedback) remember(rec *Record) {
	if !f.outbox.attached() || !rec.ids.trace.IsValid() {
		return
	}
	rec.indexed = &tracedRequest{traceID: rec.ids.trace, spanID: rec.ids.span, start: rec.Start, model: rec.Model}
	f.index.remember(rec.indexed)
}

// answered adds what is known of an indexed request once it ends: its
// answer's id (which feedback may name) and model.
func (f *feedback) answered(rec *Record) {
	if rec.indexed != nil {
		f.index.answered(rec.indexed, rec.ResponseID, rec.Model)
	}
}

// feedbackBody is what a client sends.
type feedbackBody struct {
	TraceID    *string         `json:"trace_id"`
	SpanID     *string         `json:"span_id"`
	ResponseID *string         `json:"response_id"`
	Score      json.RawMessage `json:"score"`
	Comment    *string         `json:"comment"`
}

// serveFeedback answers POST /v1/feedback.
func (p *Proxy) serveFeedback(w http.ResponseWriter, r *http.Request, who caller) {
	if r.Method != http.MethodPost {
		p.refuse(w, r, nil, methodNotAllowed("POST, OPTIONS", r.Method+" is not allowed on "+FeedbackPath).closed())
		return
	}
	f := p.feedback
	if !f.outbox.attached() {
		p.refuse(w, r, nil, invalidRequest(http.StatusServiceUnavailable, "feedback_not_collected", "",
			"feedback is not collected here: no pipeline takes it (the mlx_proxy receiver with records: feedback)").closed())
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !isJSONContent(ct) {
		p.refuse(w, r, nil, unsupportedMediaType("the body must be JSON (Content-Type: application/json)"))
		return
	}
	var buf bytes.Buffer
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxFeedbackBody))
	clearDeadline(w) // set on arrival (bodyDeadline)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			p.refuse(w, r, nil, bodyTooLarge(fmt.Sprintf("the body is larger than %d bytes", maxFeedbackBody)))
			return
		}
		p.refuse(w, r, nil, invalidRequest(http.StatusBadRequest, "invalid_body", "", "the body could not be read").closed())
		return
	}
	fb, target, score, label, msg := f.parse(buf.Bytes())
	if msg != nil {
		p.refuse(w, r, nil, invalidRequest(http.StatusBadRequest, msg.code, msg.param, msg.text))
		return
	}
	t, outcome := f.index.vote(target, label, score)
	switch outcome {
	case voteUnknown:
		p.refuse(w, r, nil, invalidRequest(http.StatusNotFound, "trace_not_found", "",
			"no recent traced answer has this id: feedback names X-Mlx-Trace-Id (with X-Mlx-Span-Id), or the answer's id, of one of the latest feedback.max_traces traced requests"))
		return
	case voteAmbiguous:
		p.refuse(w, r, nil, invalidRequest(http.StatusConflict, "ambiguous_trace", "span_id",
			"this trace id names more than one recent answer (the turns of one client trace): send span_id (X-Mlx-Span-Id) or response_id as well"))
		return
	case voteConflict:
		p.refuse(w, r, nil, invalidRequest(http.StatusConflict, "feedback_exists", "score",
			fmt.Sprintf("this answer already has feedback (%s, %g); feedback is given once per answer", t.verdict, t.score)))
		return
	case voteRecorded:
		rec := &FeedbackRecord{Time: time.Now(), TraceID: t.traceID, SpanID: t.spanID,
			OpikTraceID: opikid.Trace(t.traceID, t.spanID, t.start),
			Name:        FeedbackScoreName, Score: score, Label: label,
			ResponseID: t.responseID, Model: t.model, Client: who.client}
		if fb.Comment != nil && f.content {
			rec.Comment = *fb.Comment
		}
		if !f.outbox.offer(rec) {
			// Dropped (counted in mlx_user_feedback_dropped_total): the
			// answer keeps no verdict, so the client's retry is recorded.
			f.index.unvote(t.key(), label, score)
			p.refuse(w, r, nil, unavailable("feedback_dropped",
				"the feedback was not recorded: the pipeline that takes it is behind (feedback.queue_size) or stopping; retry shortly"))
			return
		}
		f.counted.WithLabelValues(label).Inc()
	}
	body, _ := json.Marshal(map[string]any{
		"object": "feedback", "trace_id": t.traceID.String(), "span_id": t.spanID.String(), "name": FeedbackScoreName,
		"score": score, "value": label, "status": outcome,
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// feedbackProblem is what is wrong with a feedback body.
type feedbackProblem struct{ code, param, text string }

// parse reads a feedback body: the answer it names, its score and
// verdict.
func (f *feedback) parse(body []byte) (fb feedbackBody, target feedbackTarget, score float64, label string, problem *feedbackProblem) {
	fail := func(code, param, text string) (feedbackBody, feedbackTarget, float64, string, *feedbackProblem) {
		return fb, feedbackTarget{}, 0, "", &feedbackProblem{code, param, text}
	}
	if err := json.Unmarshal(body, &fb); err != nil || !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		return fail("invalid_json", "", `the body must be a JSON object: {"trace_id" (and "span_id") or "response_id", "score", "comment"}`)
	}
	if fb.TraceID == nil && fb.ResponseID == nil {
		// A span id alone names nothing: it is unique within its trace.
		return fail("missing_id", "trace_id", "name the answer: trace_id and span_id (X-Mlx-Trace-Id, X-Mlx-Span-Id) or response_id (the answer's id, chatcmpl-…)")
	}
	if fb.TraceID != nil {
		if !hexID(*fb.TraceID, target.traceID[:]) {
			return fail("invalid_trace_id", "trace_id", "trace_id must be 32 hexadecimal digits, not all zeros, as X-Mlx-Trace-Id gives it")
		}
	}
	if fb.SpanID != nil {
		if !hexID(*fb.SpanID, target.spanID[:]) {
			return fail("invalid_span_id", "span_id", "span_id must be 16 hexadecimal digits, not all zeros, as X-Mlx-Span-Id gives it")
		}
	}
	if fb.ResponseID != nil {
		if *fb.ResponseID == "" {
			return fail("invalid_response_id", "response_id", "response_id must not be empty")
		}
		target.responseID = *fb.ResponseID
	}
	score, label, ok := verdictOf(fb.Score)
	if !ok {
		return fail("invalid_score", "score", `score must be "up" or "down", true or false, or a number from 0 to 1`)
	}
	if fb.Comment != nil && (len(*fb.Comment) > f.cfg.MaxCommentBytes || !utf8.ValidString(*fb.Comment)) {
		return fail("invalid_comment", "comment", fmt.Sprintf("comment must be UTF-8 text of at most %d bytes", f.cfg.MaxCommentBytes))
	}
	return fb, target, score, label, nil
}

// hexID decodes s (hex digits, len(dst) bytes, not all zero) into dst.
func hexID(s string, dst []byte) bool {
	id, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(id) != len(dst) {
		return false
	}
	copy(dst, id)
	return !bytes.Equal(id, make([]byte, len(id)))
}

// verdictOf reads a score: "up"/"down" (any case), true/false, or a
// number 0-1. The label is up or down for thumbs and for 1 and 0, else
// the third of 0-1 the number is in.
func verdictOf(raw json.RawMessage) (score float64, label string, ok bool) {
	var s string
	var b bool
	switch {
	case len(raw) == 0:
		return 0, "", false
	case json.Unmarshal(raw, &s) == nil:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "up", "thumbs_up", "+1":
			return 1, verdictUp, true
		case "down", "thumbs_down", "-1":
			return 0, verdictDown, true
		}
		return 0, "", false
	case json.Unmarshal(raw, &b) == nil:
		if b {
			return 1, verdictUp, true
		}
		return 0, verdictDown, true
	}
	v, isNumber := jsonedit.Float(raw)
	if !isNumber || v < 0 || v > 1 || math.IsNaN(v) {
		return 0, "", false
	}
	switch {
	case v == 1:
		return v, verdictUp, true
	case v == 0:
		return v, verdictDown, true
	case v < 1.0/3:
		return v, "low", true
	case v < 2.0/3:
		return v, "mid", true
	}
	return v, "high", true
}
