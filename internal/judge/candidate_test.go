package judge

import (
	"encoding/json"
	"testing"
)

func TestQuestionAndAnswerFromTheProxysSpan(t *testing.T) {
	body := `{"model":"mlx-community/Qwen3-4B-4bit","messages":[{"role":"system","content":"Be terse."},` +
		`{"role":"user","content":"first"},{"role":"assistant","content":"ok"},` +
		`{"role":"user","content":[{"type":"text","text":"What is"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"a cache?"}]}]}`
	q, model := questionOf([]byte(body))
	if q != "What is\na cache?" || model != "mlx-community/Qwen3-4B-4bit" {
		t.Errorf("question %q model %q", q, model)
	}
	if a := answerOf([]byte(`{"role":"assistant","content":" A cache keeps values. "}`)); a != "A cache keeps values." {
		t.Errorf("answer %q", a)
	}
	if a := answerOf([]byte(`{"role":"assistant","content":"","tool_calls":[{"id":"c1"}]}`)); a != "" {
		t.Errorf("a tool call has answer %q", a)
	}
	if q, _ := questionOf([]byte(`{"prompt":"text completion"}`)); q != "" {
		t.Errorf("a text completion has question %q", q)
	}
}

// Opik may hand metadata back as an object, or keep the OpenInference
// attribute as a JSON string under "metadata": the ids are found in both.
func TestOTelIDsFromOpikMetadata(t *testing.T) {
	inner := `{"node":"mac","otel_trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","otel_span_id":"00f067aa0ba902b7"}`
	wrapped, _ := json.Marshal(map[string]string{"metadata": inner})
	for _, meta := range [][]byte{[]byte(inner), wrapped} {
		tid, sid, ok := otelIDs(meta)
		if !ok || tid[0] != 0x4b || sid[7] != 0xb7 {
			t.Errorf("%s: ids %x %x %v", meta, tid, sid, ok)
		}
	}
	if _, _, ok := otelIDs([]byte(`{"node":"mac"}`)); ok {
		t.Error("ids from metadata without them")
	}
}
