package kvcachereceiver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func localTime(s string) time.Time {
	t, err := time.ParseInLocation(asctimeLayout, s, time.Local)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseLineRealShapes(t *testing.T) {
	at := localTime("2026-08-22 17:01:15,007")
	for _, tc := range []struct {
		line string
		want logLine
	}{
		{"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, 0.03 GB",
			logLine{Kind: linePromptCache, Usage: usage{4, 30_000_000}, Time: at}},
		{"2026-08-22 17:01:15,007 - INFO - - assistant: 3 sequences, 0.02 GB",
			logLine{Kind: lineCacheType, CacheType: typeAssistant, Usage: usage{3, 20_000_000}, Time: at}},
		{"2026-08-22 17:01:15,007 - INFO - - user: 1 sequences, 0.01 GB",
			logLine{Kind: lineCacheType, CacheType: typeUser, Usage: usage{1, 10_000_000}, Time: at}},
		{"2026-08-22 17:01:15,007 - INFO - - system: 0 sequences, 0.00 GB",
			logLine{Kind: lineCacheType, CacheType: typeSystem, Usage: usage{0, 0}, Time: at}},
		{"2026-08-22 17:01:15,007 - INFO - - tool: 2 sequences, 1.50 GB",
			logLine{Kind: lineCacheType, CacheType: typeUnknown, Usage: usage{2, 1_500_000_000}, Time: at}},
		{"2026-08-22 17:01:15,007 - INFO - KV Caches: 2 seq, 1.27 GB, latest user cache 8192 tokens",
			logLine{Kind: lineKVCaches, Usage: usage{2, 1_270_000_000}, Tokens: 8192, Time: at}},
		{"2026-08-22 17:01:15,007 - INFO - Starting httpd at 127.0.0.1 on port 8081...",
			logLine{Kind: lineServerStart, Time: at}},
		// A Windows line end, as a log copied through another system has.
		{"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 10 sequences, 123.45 GB\r",
			logLine{Kind: linePromptCache, Usage: usage{10, 123_450_000_000}, Time: at}},
		// No asctime (a launcher's prefix, a custom format): no time either.
		{"[rank 0] INFO - Prompt Cache: 4 sequences, 0.03 GB",
			logLine{Kind: lineOther}},
		{"[rank 0] x - INFO - Prompt Cache: 4 sequences, 0.03 GB",
			logLine{Kind: linePromptCache, Usage: usage{4, 30_000_000}}},
	} {
		t.Run(tc.line, func(t *testing.T) {
			assert.Equal(t, tc.want, parseLine([]byte(tc.line)))
		})
	}
}

// Under 5 MB the engine prints 0.00 GB: the receiver reads exactly what was
// printed, in bytes, without float rounding.
func TestSizesAreReadExactlyInDecimalGigabytes(t *testing.T) {
	for in, want := range map[string]int64{
		"0.00": 0, "0.01": 10_000_000, "0.03": 30_000_000, "0.29": 290_000_000,
		"1.10": 1_100_000_000, "12.5": 12_500_000_000, "7": 7_000_000_000,
		"0.123456789": 123_456_789,
	} {
		l := parseLine([]byte("2026-08-22 17:01:15,007 - INFO - Prompt Cache: 1 sequences, " + in + " GB"))
		assert.Equal(t, linePromptCache, l.Kind, in)
		assert.Equal(t, want, l.Usage.Bytes, in)
	}
}

func TestParseLineRejectsNearMisses(t *testing.T) {
	for _, line := range []string{
		"",
		"Prompt Cache: 4 sequences, 0.03 GB", // no level
		"2026-08-22 17:01:15,007 - WARNING - Prompt Cache: 4 sequences, 0.03 GB",
		// A DEBUG record quoting a client's text must not pass for the
		// engine's own INFO record.
		"2026-08-22 17:01:15,007 - DEBUG - Incoming Request Body: x - INFO - Prompt Cache: 99 sequences, 9.99 GB",
		"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequence, 0.03 GB",
		"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, 0.03 MB",
		"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, 0.03 GB and more",
		"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, 0.03GB",
		"2026-08-22 17:01:15,007 - INFO - Prompt Cache: -4 sequences, 0.03 GB",
		"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, .03 GB",
		"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, 1. GB",
		"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, 0.1234567891 GB",
		"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, 99999999999.00 GB",
		"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 9999999999999999999999 sequences, 0.03 GB",
		"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, 0.03 GB\n",
		"2026-08-22 17:01:15,007 - INFO - - : 1 sequences, 0.01 GB",
		"2026-08-22 17:01:15,007 - INFO - - us er: 1 sequences, 0.01 GB",
		"2026-08-22 17:01:15,007 - INFO - -user: 1 sequences, 0.01 GB",
		"2026-08-22 17:01:15,007 - INFO - KV Caches: 2 seq, 1.27 GB",
		"2026-08-22 17:01:15,007 - INFO - KV Caches: 2 seq, 1.27 GB, latest user cache tokens",
		"2026-08-22 17:01:15,007 - INFO - KV Caches: 2 seq, 1.27 GB, latest user cache 5 tokens!",
		"2026-08-22 17:01:15,007 - INFO - Starting httpd at 127.0.0.1 on port 8081",
		"2026-08-22 17:01:15,007 - INFO - Prompt processing progress: 2048/3120",
		`127.0.0.1 - - [22/Aug/2026 17:00:03] "POST /v1/chat/completions HTTP/1.1" 200 -`,
		"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, 0.0\xff GB",
		"\xff\xfe\x00 - INFO - Prompt Cache: 4\x00 sequences, 0.03 GB",
	} {
		assert.Equal(t, lineOther, parseLine([]byte(line)).Kind, "%q", line)
	}
}

func TestBadTimestampFieldsGiveNoTime(t *testing.T) {
	l := parseLine([]byte("2026-13-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, 0.03 GB"))
	assert.Equal(t, linePromptCache, l.Kind)
	assert.True(t, l.Time.IsZero())
}

func TestVeryLongLinesAreCheapAndRejected(t *testing.T) {
	long := "2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, 0." + strings.Repeat("0", 1<<20) + " GB"
	assert.Equal(t, lineOther, parseLine([]byte(long)).Kind)
	long = "2026-08-22 17:01:15,007 - INFO - Prompt Cache: " + strings.Repeat("4", 1<<20) + " sequences, 0.03 GB"
	assert.Equal(t, lineOther, parseLine([]byte(long)).Kind)
}

// FuzzParseLine: no input makes the parser fail, and whatever it accepts
// reads like the engine's own record.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, 0.03 GB",
		"2026-08-22 17:01:15,007 - INFO - - assistant: 3 sequences, 0.02 GB",
		"2026-08-22 17:01:15,007 - INFO - KV Caches: 2 seq, 1.27 GB, latest user cache 8192 tokens",
		"2026-08-22 17:01:15,007 - INFO - Starting httpd at 127.0.0.1 on port 8081...",
		"x - INFO - Prompt Cache: 1 sequences, 1 GB",
		"\xff - INFO - - \xff: 1 sequences, 0.01 GB",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		l := parseLine(line)
		if l.Kind == lineOther {
			return
		}
		s := string(line)
		if !strings.Contains(s, infoMarker) {
			t.Fatalf("accepted a line without %q: %q", infoMarker, s)
		}
		if l.Usage.Sequences < 0 || l.Usage.Bytes < 0 || l.Tokens < 0 {
			t.Fatalf("negative values from %q: %+v", s, l)
		}
		if l.Kind != lineServerStart && !strings.Contains(s, " GB") {
			t.Fatalf("a size without its unit: %q", s)
		}
	})
}

// FuzzBlockRoundTrip: what the engine prints from any count and size is
// read back as that count and size.
func FuzzBlockRoundTrip(f *testing.F) {
	f.Add(uint32(4), uint32(3))
	f.Add(uint32(0), uint32(0))
	f.Add(uint32(1<<31), uint32(123456))
	f.Fuzz(func(t *testing.T, n, centiGB uint32) {
		line := fmt.Sprintf("2026-08-22 17:01:15,007 - INFO - - user: %d sequences, %d.%02d GB", n, centiGB/100, centiGB%100)
		l := parseLine([]byte(line))
		if l.Kind != lineCacheType || l.CacheType != typeUser {
			t.Fatalf("not read: %q", line)
		}
		if l.Usage.Sequences != int64(n) || l.Usage.Bytes != int64(centiGB)*10_000_000 {
			t.Fatalf("%q read as %+v", line, l.Usage)
		}
	})
}
