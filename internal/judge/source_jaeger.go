package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
	"github.com/mlx-otelcol/mlx-otelcol/internal/spanwalk"
	"github.com/mlx-otelcol/mlx-otelcol/proxy/span/spankey"
)

// JaegerSource reads recent spans of the proxy's service from Jaeger's
// query API v3 (GET /api/v3/traces, OTLP JSON under "result"), for users
// without Opik.
type JaegerSource struct {
	// Endpoint is Jaeger's query address, http://host:16686.
	Endpoint string
	// Service is the proxy's service.name (mlx-metrics-proxy).
	Service string
	// Lookback is how far back traces are looked for.
	Lookback time.Duration
	HTTP     *http.Client
	Now      func() time.Time
}

// Name is the source's name in logs.
func (JaegerSource) Name() string { return "jaeger" }

// maxJaegerAnswer bounds one answer of the query API.
const maxJaegerAnswer = 64 << 20

// Recent returns the newest limit spans of the service that carry an
// input and an output, newest first.
func (s JaegerSource) Recent(ctx context.Context, limit int) ([]Candidate, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	t := now()
	q := url.Values{
		"query.service_name":   {s.Service},
		"query.start_time_min": {t.Add(-s.Lookback).UTC().Format(time.RFC3339Nano)},
		"query.start_time_max": {t.UTC().Format(time.RFC3339Nano)},
		"query.num_traces":     {strconv.Itoa(limit)},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(s.Endpoint, "/")+"/api/v3/traces?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	hc := s.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJaegerAnswer+1))
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, nil // "No traces found"
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("jaeger query: %s: %s", resp.Status, truncate(strings.TrimSpace(string(body)), 200))
	case len(body) > maxJaegerAnswer:
		return nil, fmt.Errorf("jaeger query: answer over %d MiB", maxJaegerAnswer>>20)
	}
	cands, err := parseJaegerTraces(body)
	if err != nil {
		return nil, err
	}
	if len(cands) > limit {
		cands = cands[:limit]
	}
	return cands, nil
}

// parseJaegerTraces reads the query API's {"result": <OTLP JSON>} into
// candidates: every span with input.value and output.value, newest first.
func parseJaegerTraces(body []byte) ([]Candidate, error) {
	var wrap struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &wrap); err != nil {
		return nil, fmt.Errorf("jaeger query: %w", err)
	}
	if len(wrap.Result) == 0 {
		return nil, nil
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(wrap.Result)
	if err != nil {
		return nil, fmt.Errorf("jaeger query: %w", err)
	}
	var out []Candidate
	spanwalk.Each(td, func(sp ptrace.Span) {
		if c, ok := candidateOfSpan(sp); ok {
			out = append(out, c)
		}
	})
	sort.SliceStable(out, func(a, b int) bool { return out[a].Start.After(out[b].Start) })
	return out, nil
}

func candidateOfSpan(sp ptrace.Span) (Candidate, bool) {
	in, ok1 := sp.Attributes().Get(spankey.InputValue)
	outv, ok2 := sp.Attributes().Get(spankey.OutputValue)
	if !ok1 || !ok2 {
		return Candidate{}, false
	}
	c := Candidate{TraceID: sp.TraceID(), SpanID: sp.SpanID(), HasIDs: true, Start: sp.StartTimestamp().AsTime()}
	c.OpikID = opikid.Trace(c.TraceID, c.SpanID, c.Start)
	c.Question, c.Model = questionOf([]byte(in.Str()))
	c.Answer = answerOf([]byte(outv.Str()))
	if o, ok := sp.Attributes().Get(spankey.MlxOrigin); ok {
		c.Origin = o.AsString()
	}
	return c, true
}
