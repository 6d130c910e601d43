package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
)

// feedbackSink keeps the feedback records the proxy hands over.
type feedbackSink struct {
	mu   sync.Mutex
	recs []*FeedbackRecord
}

func (s *feedbackSink) consume(_ context.Context, recs []*FeedbackRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, recs...)
	return nil
}

func (s *feedbackSink) records() []*FeedbackRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*FeedbackRecord(nil), s.recs...)
}

// feedbackRig is a traced proxy whose feedback goes to a sink.
func feedbackRig(t *testing.T, opts ...rigOption) (*rig, *spanSink, *feedbackSink) {
	r, spans := tracedRig(t, opts...)
	fs := &feedbackSink{}
	detachOnCleanup(t, r.proxy.AttachFeedback(fs.consume))
	return r, spans, fs
}

// ask sends one completion and returns its trace id header and answer id.
func ask(t *testing.T, r *rig) (traceID, responseID string) {
	t.Helper()
	resp := r.post("/v1/chat/completions", `{"messages":[{"role":"user","content":"Name a river."}],"max_tokens":8}`)
	require.Equal(t, http.StatusOK, resp.status)
	var answer struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal(resp.body, &answer))
	settle(r.proxy)
	return resp.header.Get(TraceIDHeader), answer.ID
}

func (r *rig) feedback(body string) response {
	return r.do(r.url, http.MethodPost, FeedbackPath, body)
}

// The answer's X-Mlx-Trace-Id is its span's trace id, and feedback on it
// is one record on that span, with the Opik trace id the opik exporter
// mints for it, counted once however often it is sent.
func TestFeedbackOnATrace(t *testing.T) {
	r, spans, fs := feedbackRig(t)
	traceID, _ := ask(t, r)
	require.Len(t, traceID, 32, "the answer carries its trace id")
	span := spans.next(t, 1)
	assert.Equal(t, span.Context.TraceID().String(), traceID)

	body := `{"trace_id":"` + traceID + `","score":"up","comment":"spot on"}`
	resp := r.feedback(body)
	require.Equal(t, http.StatusOK, resp.status, string(resp.body))
	assert.Contains(t, string(resp.body), `"status":"recorded"`)
	again := r.feedback(body)
	require.Equal(t, http.StatusOK, again.status)
	assert.Contains(t, string(again.body), `"status":"duplicate"`, "the same feedback again changes nothing")

	// Feedback on another answer after it: the records reach the sink in
	// the order they were offered, so once this one is there, a record of
	// the duplicate would be too.
	later, _ := ask(t, r)
	require.Equal(t, http.StatusOK, r.feedback(`{"trace_id":"`+later+`","score":"down"}`).status)
	require.Eventually(t, func() bool { return len(fs.records()) >= 2 }, 5*time.Second, time.Millisecond)
	recs := fs.records()
	require.Len(t, recs, 2, "one record, however often it is sent, then the later one")
	assert.Equal(t, later, recs[1].TraceID.String())
	rec := recs[0]
	assert.Equal(t, span.Context.TraceID(), rec.TraceID)
	assert.Equal(t, span.Context.SpanID(), rec.SpanID)
	assert.Equal(t, opikid.Trace(rec.TraceID, rec.SpanID, span.Start), rec.OpikTraceID)
	assert.Equal(t, FeedbackScoreName, rec.Name)
	assert.Equal(t, 1.0, rec.Score)
	assert.Equal(t, "up", rec.Label)
	assert.Equal(t, "spot on", rec.Comment)
	assert.Equal(t, ClientLocal, rec.Client)

	sc := r.scrape()
	assert.Equal(t, 1.0, value(t, sc, "mlx_user_feedback_total", "value", "up"))
	assert.Equal(t, 1.0, value(t, sc, "mlx_user_feedback_total", "value", "down"), "the later answer's")

	conflict := r.feedback(`{"trace_id":"` + traceID + `","score":"down"}`)
	assert.Equal(t, http.StatusConflict, conflict.status)
	assert.Contains(t, string(conflict.body), `"code":"feedback_exists"`)
}

// The answer's own id (chatcmpl-…) names it as well as its trace id.
func TestFeedbackByResponseID(t *testing.T) {
	r, _, fs := feedbackRig(t)
	traceID, responseID := ask(t, r)
	require.True(t, strings.HasPrefix(responseID, "chatcmpl-"), responseID)
	resp := r.feedback(`{"response_id":"` + responseID + `","score":0.5}`)
	require.Equal(t, http.StatusOK, resp.status, string(resp.body))
	require.Eventually(t, func() bool { return len(fs.records()) == 1 }, 5*time.Second, time.Millisecond)
	rec := fs.records()[0]
	assert.Equal(t, traceID, rec.TraceID.String())
	assert.Equal(t, "mid", rec.Label)
	assert.Equal(t, responseID, rec.ResponseID)
	assert.Equal(t, 1.0, value(t, r.scrape(), "mlx_user_feedback_total", "value", "mid"))
}

// Bad bodies get 4xx in OpenAI's error shape, and are not counted.
func TestFeedbackRefusals(t *testing.T) {
	r, _, _ := feedbackRig(t)
	traceID, _ := ask(t, r)
	for _, c := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"not JSON", `score=up`, 400, "invalid_json"},
		{"an array", `[1]`, 400, "invalid_json"},
		{"no id", `{"score":"up"}`, 400, "missing_id"},
		{"a bad trace id", `{"trace_id":"xyz","score":"up"}`, 400, "invalid_trace_id"},
		{"a zero trace id", `{"trace_id":"00000000000000000000000000000000","score":"up"}`, 400, "invalid_trace_id"},
		{"a bad span id", `{"trace_id":"` + traceID + `","span_id":"xyz","score":"up"}`, 400, "invalid_span_id"},
		{"a span id alone", `{"span_id":"00f067aa0ba902b7","score":"up"}`, 400, "missing_id"},
		{"an unknown span", `{"trace_id":"` + traceID + `","span_id":"00f067aa0ba902b7","score":"up"}`, 404, "trace_not_found"},
		{"no score", `{"trace_id":"` + traceID + `"}`, 400, "invalid_score"},
		{"a score past 1", `{"trace_id":"` + traceID + `","score":1.5}`, 400, "invalid_score"},
		{"a word", `{"trace_id":"` + traceID + `","score":"great"}`, 400, "invalid_score"},
		{"a long comment", `{"trace_id":"` + traceID + `","score":"up","comment":"` + strings.Repeat("x", 1001) + `"}`, 400, "invalid_comment"},
		{"an unknown trace", `{"trace_id":"0123456789abcdef0123456789abcdef","score":"up"}`, 404, "trace_not_found"},
		{"an unknown answer", `{"response_id":"chatcmpl-nope","score":"down"}`, 404, "trace_not_found"},
		{"a body too large", `{"trace_id":"` + traceID + `","score":"up","comment":"` + strings.Repeat("x", maxFeedbackBody) + `"}`, 413, "request_too_large"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := r.feedback(c.body)
			assert.Equal(t, c.status, resp.status, string(resp.body))
			var e struct {
				Error struct {
					Type, Code, Message string
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(resp.body, &e), string(resp.body))
			assert.Equal(t, c.code, e.Error.Code)
			assert.Equal(t, "invalid_request_error", e.Error.Type)
			assert.NotEmpty(t, e.Error.Message)
		})
	}
	get := r.do(r.url, http.MethodGet, FeedbackPath, "")
	assert.Equal(t, http.StatusMethodNotAllowed, get.status)
	sc := r.scrape()
	for _, v := range []string{"up", "down"} {
		assert.Equal(t, 0.0, value(t, sc, "mlx_user_feedback_total", "value", v))
	}
}

// Without a pipeline that takes feedback, the route says so.
func TestFeedbackWithoutAPipeline(t *testing.T) {
	r, _ := tracedRig(t)
	traceID, _ := ask(t, r)
	resp := r.feedback(`{"trace_id":"` + traceID + `","score":"up"}`)
	assert.Equal(t, http.StatusServiceUnavailable, resp.status)
	assert.Contains(t, string(resp.body), "feedback_not_collected")
}

// A remote caller without a key is refused as on the API.
func TestFeedbackIsAdmittedAsTheAPI(t *testing.T) {
	r, _, _ := feedbackRig(t, withConfig(func(c *Config) {
		c.APIKeys = []APIKey{{Name: "web", Key: "0123456789abcdef0123"}}
		c.RequireKeyOnLoopback = true
	}))
	resp := r.feedback(`{"trace_id":"0123456789abcdef0123456789abcdef","score":"up"}`)
	assert.Equal(t, http.StatusUnauthorized, resp.status)
}

// The index forgets the oldest traced request first, and its memory stays
// bounded by max_traces, also when every request is in one trace.
func TestFeedbackIndexIsBounded(t *testing.T) {
	x := newFeedbackIndex(2)
	shared := newTraceID()
	var reqs []*tracedRequest
	for i := range 5 {
		tr := &tracedRequest{traceID: newTraceID(), spanID: newSpanID(), responseID: fmt.Sprintf("chatcmpl-%d", i)}
		if i >= 2 {
			tr.traceID = shared // the turns of one client trace
		}
		reqs = append(reqs, tr)
		x.remember(tr)
	}
	_, outcome := x.vote(feedbackTarget{traceID: reqs[0].traceID}, "up", 1)
	assert.Equal(t, voteUnknown, outcome, "the oldest is forgotten")
	_, outcome = x.vote(feedbackTarget{responseID: "chatcmpl-0"}, "up", 1)
	assert.Equal(t, voteUnknown, outcome)
	_, outcome = x.vote(feedbackTarget{traceID: shared, spanID: reqs[2].spanID}, "up", 1)
	assert.Equal(t, voteUnknown, outcome, "forgotten, though its trace is not")
	_, outcome = x.vote(feedbackTarget{traceID: shared}, "up", 1)
	assert.Equal(t, voteAmbiguous, outcome)
	got, outcome := x.vote(feedbackTarget{traceID: shared, spanID: reqs[3].spanID}, "up", 1)
	assert.Equal(t, voteRecorded, outcome)
	assert.Equal(t, reqs[3].spanID, got.spanID)
	got, outcome = x.vote(feedbackTarget{responseID: "chatcmpl-4"}, "down", 0)
	assert.Equal(t, voteRecorded, outcome)
	assert.Equal(t, reqs[4].spanID, got.spanID)
	assert.Len(t, x.bySpan, 2)
	assert.Len(t, x.byTrace, 1)
	assert.Len(t, x.byTrace[shared], 2)
	assert.Len(t, x.byResp, 2)

	for range 3 { // the shared trace is forgotten whole
		x.remember(&tracedRequest{traceID: newTraceID(), spanID: newSpanID()})
	}
	assert.Len(t, x.bySpan, 2)
	assert.Len(t, x.byTrace, 2)
	assert.NotContains(t, x.byTrace, shared)
	assert.Empty(t, x.byResp)
}

// The turns of an agent's run share the client's trace (its traceparent):
// each answer names its own span in X-Mlx-Span-Id. A trace id alone that
// names more than one answer is refused as ambiguous, not given to the
// latest; the span id, or the answer's id, picks one.
func TestFeedbackOnTurnsOfOneTrace(t *testing.T) {
	r, _, fs := feedbackRig(t)
	parent := "4bf92f3577b34da6a3ce929d0e0e4736"
	turn := func(parentSpan string) (spanID, responseID string) {
		resp := r.do(r.url, http.MethodPost, "/v1/chat/completions", `{"messages":[{"role":"user","content":"Name a river."}],"max_tokens":8}`,
			"Traceparent", "00-"+parent+"-"+parentSpan+"-01")
		require.Equal(t, http.StatusOK, resp.status)
		assert.Equal(t, parent, resp.header.Get(TraceIDHeader))
		var answer struct {
			ID string `json:"id"`
		}
		require.NoError(t, json.Unmarshal(resp.body, &answer))
		return resp.header.Get(SpanIDHeader), answer.ID
	}
	first, _ := turn("00f067aa0ba902b7")
	second, secondAnswer := turn("00f067aa0ba902b8")
	third, _ := turn("00f067aa0ba902b9")
	settle(r.proxy)
	require.Len(t, first, 16, "the answer carries its span id")
	require.NotEqual(t, first, second)

	amb := r.feedback(`{"trace_id":"` + parent + `","score":"up"}`)
	assert.Equal(t, http.StatusConflict, amb.status, string(amb.body))
	assert.Contains(t, string(amb.body), `"code":"ambiguous_trace"`)

	resp := r.feedback(`{"trace_id":"` + parent + `","span_id":"` + first + `","score":"down"}`)
	require.Equal(t, http.StatusOK, resp.status, string(resp.body))
	assert.Contains(t, string(resp.body), `"span_id":"`+first+`"`)
	resp = r.feedback(`{"trace_id":"` + parent + `","response_id":"` + secondAnswer + `","score":"up"}`)
	require.Equal(t, http.StatusOK, resp.status, string(resp.body))
	assert.Contains(t, string(resp.body), `"span_id":"`+second+`"`)
	again := r.feedback(`{"response_id":"` + secondAnswer + `","score":"up"}`)
	assert.Contains(t, string(again.body), `"status":"duplicate"`)
	other := r.feedback(`{"trace_id":"` + parent + `","span_id":"` + third + `","score":0.5}`)
	require.Equal(t, http.StatusOK, other.status, string(other.body))

	require.Eventually(t, func() bool { return len(fs.records()) == 3 }, 5*time.Second, time.Millisecond)
	bySpan := map[string]string{}
	for _, rec := range fs.records() {
		assert.Equal(t, parent, rec.TraceID.String())
		bySpan[rec.SpanID.String()] = rec.Label
	}
	assert.Equal(t, map[string]string{first: "down", second: "up", third: "mid"}, bySpan)
}

func TestVerdicts(t *testing.T) {
	for raw, want := range map[string]string{`"up"`: "up", `"Down"`: "down", `true`: "up", `false`: "down",
		`1`: "up", `0`: "down", `0.1`: "low", `0.5`: "mid", `0.9`: "high"} {
		_, label, ok := verdictOf(json.RawMessage(raw))
		assert.True(t, ok, raw)
		assert.Equal(t, want, label, raw)
	}
	for _, raw := range []string{`null`, `-0.1`, `2`, `"meh"`, `{}`, `[]`} {
		_, _, ok := verdictOf(json.RawMessage(raw))
		assert.False(t, ok, raw)
	}
}

// A streamed answer carries its trace id in its headers too; a request
// that opts out of tracing, and one refused before tracing is on, none.
func TestTraceIDHeader(t *testing.T) {
	r, spans, _ := feedbackRig(t)
	resp := r.post("/v1/chat/completions", `{"messages":[{"role":"user","content":"Hi"}],"max_tokens":8,"stream":true}`)
	require.Equal(t, http.StatusOK, resp.status)
	id := resp.header.Get(TraceIDHeader)
	span := spans.next(t, 1).Context
	assert.Equal(t, span.TraceID().String(), id)
	assert.Equal(t, span.SpanID().String(), resp.header.Get(SpanIDHeader))

	untraced := r.do(r.url, http.MethodPost, "/v1/chat/completions", `{"messages":[{"role":"user","content":"Hi"}],"max_tokens":8}`, NoTraceHeader, "0")
	require.Equal(t, http.StatusOK, untraced.status)
	assert.Empty(t, untraced.header.Get(TraceIDHeader))
	assert.Empty(t, untraced.header.Get(SpanIDHeader))

	// A client's sampled traceparent keeps its trace id.
	parent := "4bf92f3577b34da6a3ce929d0e0e4736"
	cont := r.do(r.url, http.MethodPost, "/v1/chat/completions", `{"messages":[{"role":"user","content":"Hi"}],"max_tokens":8}`,
		"Traceparent", "00-"+parent+"-00f067aa0ba902b7-01")
	assert.Equal(t, parent, cont.header.Get(TraceIDHeader))
	unsampled := r.do(r.url, http.MethodPost, "/v1/chat/completions", `{"messages":[{"role":"user","content":"Hi"}],"max_tokens":8}`,
		"Traceparent", "00-"+parent+"-00f067aa0ba902b7-00")
	assert.Empty(t, unsampled.header.Get(TraceIDHeader), "not sampled: no span, no id to give feedback on")
}

// Feedback sent the moment the answer is read finds it: the request is
// indexed when its ids are chosen, not when the proxy has accounted for it
// (a moment after the client has its last bytes).
func TestFeedbackRightAfterTheAnswer(t *testing.T) {
	r, _, _ := feedbackRig(t)
	// Feedback goes on another connection, as a page's often does: on the
	// answer's own, the server reads it only once the answer's handler
	// has returned.
	other := &rig{t: t, url: r.url, client: testClient(t)}
	for i := range 50 {
		body := `{"messages":[{"role":"user","content":"Name a river."}],"max_tokens":8` + []string{`}`, `,"stream":true}`}[i%2]
		resp := r.post("/v1/chat/completions", body)
		require.Equal(t, http.StatusOK, resp.status)
		fb := other.feedback(`{"trace_id":"` + resp.header.Get(TraceIDHeader) + `","span_id":"` + resp.header.Get(SpanIDHeader) + `","score":"up"}`)
		require.Equal(t, http.StatusOK, fb.status, "request %d: %s", i, fb.body)
		assert.Contains(t, string(fb.body), `"status":"recorded"`)
	}
}

// Feedback the proxy cannot hand to the pipeline (its queue is full) is
// not reported as recorded: 503 with Retry-After, counted as dropped and
// not as feedback, and the answer takes the same or another verdict
// again once the queue has room.
func TestFeedbackDroppedIsNotRecorded(t *testing.T) {
	r, _ := tracedRig(t, withConfig(func(c *Config) { c.Feedback.QueueSize = 1 }))
	fs := &feedbackSink{}
	release := make(chan struct{})
	var once sync.Once
	detachOnCleanup(t, r.proxy.AttachFeedback(func(ctx context.Context, recs []*FeedbackRecord) error {
		select { // the pipeline is stuck until released
		case <-release:
		case <-ctx.Done():
		}
		return fs.consume(ctx, recs)
	}))
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the detach

	// One record with the stuck pipeline, one in the queue: of four,
	// at least two are dropped.
	var traces []string
	var dropped []string
	for range 4 {
		traceID, _ := ask(t, r)
		traces = append(traces, traceID)
		resp := r.feedback(`{"trace_id":"` + traceID + `","score":"up"}`)
		if resp.status == http.StatusOK {
			assert.Contains(t, string(resp.body), `"status":"recorded"`)
			continue
		}
		require.Equal(t, http.StatusServiceUnavailable, resp.status, string(resp.body))
		assert.Equal(t, "1", resp.header.Get("Retry-After"))
		assert.Equal(t, "feedback_dropped", errorOf(t, resp)["code"])
		assert.Equal(t, "server_error", errorOf(t, resp)["type"])
		dropped = append(dropped, traceID)
	}
	require.GreaterOrEqual(t, len(dropped), 2)
	sc := r.scrape()
	assert.Equal(t, float64(len(traces)-len(dropped)), value(t, sc, "mlx_user_feedback_total", "value", "up"), "only what was handed over")
	assert.Equal(t, float64(len(dropped)), value(t, sc, "mlx_user_feedback_dropped_total"))

	unblock()
	require.Eventually(t, func() bool { return len(fs.records()) == len(traces)-len(dropped) }, 5*time.Second, time.Millisecond)
	resp := r.feedback(`{"trace_id":"` + dropped[0] + `","score":"down"}`)
	require.Equal(t, http.StatusOK, resp.status, "no verdict was kept: %s", resp.body)
	assert.Contains(t, string(resp.body), `"status":"recorded"`)
	require.Eventually(t, func() bool { return len(fs.records()) == len(traces)-len(dropped)+1 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 1.0, value(t, r.scrape(), "mlx_user_feedback_total", "value", "down"))
}
