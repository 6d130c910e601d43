package judge

import (
	"context"
	"encoding/hex"
	"encoding/json"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
)

// OpikSource reads the newest traces of the Opik project, as the original
// did (GET /v1/private/traces?project_name=&page=1&size=limit).
type OpikSource struct{ API *opikapi.Client }

// Name is the source's name in logs.
func (OpikSource) Name() string { return "opik" }

// Recent returns the newest limit traces.
func (s OpikSource) Recent(ctx context.Context, limit int) ([]Candidate, error) {
	traces, err := s.API.RecentTraces(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Candidate, 0, len(traces))
	for _, t := range traces {
		c := Candidate{OpikID: t.ID, Start: t.StartTime, Scored: map[string]bool{}}
		c.Question, c.Model = questionOf(unwrapJSON(t.Input))
		c.Answer = answerOf(unwrapJSON(t.Output))
		c.Origin = originOf(unwrapJSON(t.Metadata), unwrapJSON(t.Input))
		for _, fs := range t.FeedbackScores {
			c.Scored[fs.Name] = true
		}
		c.TraceID, c.SpanID, c.HasIDs = otelIDs(unwrapJSON(t.Metadata))
		if !c.HasIDs {
			// A trace made from another client's span by OTLP: its
			// OpenInference metadata JSON is under "metadata" in the input.
			c.TraceID, c.SpanID, c.HasIDs = otelIDs(unwrapJSON(t.Input))
		}
		out = append(out, c)
	}
	return out, nil
}

// otelIDs reads the proxy's otel_trace_id and otel_span_id from a trace's
// metadata (the opik exporter's: at its top level), or from under
// "metadata" (the OpenInference attribute, as Opik's OTLP mapping keeps it:
// a member of the input, under its full key).
func otelIDs(meta []byte) (tid [16]byte, sid [8]byte, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return tid, sid, false
	}
	if _, has := m["otel_trace_id"]; !has {
		if inner, has := m["metadata"]; has {
			return otelIDs(unwrapJSON(inner))
		}
	}
	var ts, ss string
	_ = json.Unmarshal(m["otel_trace_id"], &ts)
	_ = json.Unmarshal(m["otel_span_id"], &ss)
	tb, err1 := hex.DecodeString(ts)
	sb, err2 := hex.DecodeString(ss)
	if err1 != nil || err2 != nil || len(tb) != 16 || len(sb) != 8 {
		return tid, sid, false
	}
	copy(tid[:], tb)
	copy(sid[:], sb)
	return tid, sid, true
}
