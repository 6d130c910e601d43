package bench

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteLevels(t *testing.T) {
	var buf bytes.Buffer
	sv := Pcts{N: 1, P99: 20}
	WriteLevels(&buf, []Level{
		{Name: "c=1", Mode: "sweep", Summary: Summary{Requests: 10, OK: 10, TTFT: Pcts{N: 10, P50: 800, P99: 900}, TPS: Pcts{N: 10, P50: 65}, ReqPerS: 0.5, OutTokPerS: 32.5}},
		{Name: "rate=2", Mode: "rate", Summary: Summary{Requests: 4, OK: 3, Errors: map[string]int{"timeout": 1}, ServiceE2E: &sv, SendRate: 2, Late: 1}},
	})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%q", buf.String())
	}
	for _, want := range []string{"800ms", "65.0", "32.5"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("c=1 line %q lacks %q", lines[1], want)
		}
	}
	for _, want := range []string{"timeout 1", "2.00", "20.0ms"} {
		if !strings.Contains(lines[2], want) {
			t.Errorf("rate line %q lacks %q", lines[2], want)
		}
	}
	if !strings.Contains(lines[0], "sent/s") {
		t.Error("open-loop columns missing")
	}
}

func TestWriteProfile(t *testing.T) {
	var buf bytes.Buffer
	WriteProfile(&buf, []Level{{Prompt: "short", Stream: true, Summary: Summary{Requests: 2, OK: 2, TTFT: Pcts{N: 2, P50: 800}, PromptTokens: Pcts{N: 2, Mean: 35}}}})
	if out := buf.String(); !strings.Contains(out, "short") || !strings.Contains(out, "800ms") || !strings.Contains(out, "35") {
		t.Errorf("%q", out)
	}
}
