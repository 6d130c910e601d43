package jsonlexporter

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// FuzzAppendString: every string comes back from encoding/json as it went
// in (invalid UTF-8 as U+FFFD, as encoding/json writes it).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\\n\r\t\x00\x1f", "é ☃ 𝄞", "\xff\xfe", "\u2028", "\x1b[33m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendString(nil, s)
		if !json.Valid(b) {
			t.Fatalf("not JSON: %q", b)
		}
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if !utf8.ValidString(s) {
			// encoding/json replaces each invalid byte, ToValidUTF8 each run.
			want = string([]rune(s))
		}
		if back != want {
			t.Fatalf("%q came back as %q, want %q", s, back, want)
		}
	})
}

// An event's name and its trace context are on its line; a plain record
// has none of the three keys.
func TestRecordEventNameAndTraceContext(t *testing.T) {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	ev := lrs.AppendEmpty()
	ev.SetEventName("gen_ai.evaluation.result")
	ev.SetTraceID(pcommon.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36})
	ev.SetSpanID(pcommon.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7})
	ev.Attributes().PutDouble("gen_ai.evaluation.score.value", 0.75)
	lrs.AppendEmpty().Body().SetStr("plain")
	out, err := appendRecords(nil, ld)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines %q", lines)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatal(err)
	}
	if got["event_name"] != "gen_ai.evaluation.result" || got["trace_id"] != "4bf92f3577b34da6a3ce929d0e0e4736" || got["span_id"] != "00f067aa0ba902b7" {
		t.Errorf("event line %s", lines[0])
	}
	for _, k := range []string{"event_name", "trace_id", "span_id"} {
		if strings.Contains(lines[1], `"`+k+`"`) {
			t.Errorf("plain line has %s: %s", k, lines[1])
		}
	}
}
