package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func TestFormatProgress(t *testing.T) {
	st := ProgressState{Level: "c=4", Elapsed: 5 * time.Second, Total: 20 * time.Second, Requests: 12, Errors: 1, TTFTp50: 812, E2Ep50: 2100}
	got := FormatProgress(st, true)
	want := "c=4              [#####...............]   5.0s/20s left 15.0s  req 12  err 1  p50 ttft 812ms  p50 e2e 2.10s"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	st.Elapsed = 21 * time.Second
	if got := FormatProgress(st, true); !strings.Contains(got, "21.0s/20s draining  req 12") {
		t.Errorf("draining: %q", got)
	}
	if got := FormatProgress(ProgressState{Level: "short/stream", Elapsed: 1500 * time.Millisecond}, true); got != "short/stream       1.5s  req 0  err 0" {
		t.Errorf("no total: %q", got)
	}
}

func TestBarAndFormatMs(t *testing.T) {
	for _, tc := range []struct {
		frac float64
		want string
	}{{0, "[....]"}, {0.5, "[##..]"}, {1, "[####]"}, {7, "[####]"}, {-1, "[....]"}} {
		if got := Bar(tc.frac, 4); got != tc.want {
			t.Errorf("Bar(%v) = %q", tc.frac, got)
		}
	}
	for _, tc := range []struct {
		ms   float64
		want string
	}{{0.5, "0.50ms"}, {12.34, "12.3ms"}, {812.4, "812ms"}, {2100, "2.10s"}, {12345, "12.3s"}, {math.NaN(), "-"}} {
		if got := FormatMs(tc.ms); got != tc.want {
			t.Errorf("FormatMs(%v) = %q, want %q", tc.ms, got, tc.want)
		}
	}
}

// Off a terminal, one line per level and no carriage returns.
func TestProgressPlain(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf, false)
	p.StartLevel("c=1", time.Second)
	p.Add(Sample{TTFTUS: 800_000, E2EUS: 1_500_000, Stream: true})
	p.Add(Sample{Cause: "http_500"})
	p.EndLevel(time.Second, Summary{Requests: 2, OK: 1, Warmup: 1, TTFT: Pcts{N: 1, P50: 800}}, "12.0 tok/s")
	out := buf.String()
	if strings.Count(out, "\n") != 1 || strings.Contains(out, "\r") || !strings.Contains(out, "c=1                1.0s  req 2 (+1 warm-up)  err 1  p50 ttft 800ms") || !strings.HasSuffix(out, "12.0 tok/s\n") {
		t.Errorf("%q", out)
	}
}
