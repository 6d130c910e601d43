package logclassifyprocessor

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

var fuzzSeeds = []string{
	"2026-08-22 16:59:44,123 - INFO - Prompt Cache: 4 sequences, 0.03 GB",
	`127.0.0.1 - - [22/Aug/2026 16:59:44] "POST /v1/chat/completions HTTP/1.1" 200 -`,
	`127.0.0.1 - - [22/Aug/2026 16:59:44] code 400, message Bad request`,
	`127.0.0.1 - - [22/Aug/2026 16:59:44] "`,
	"\x1b[33m[WARN] Node with rank 1 exited with code 1 \x1b[0m",
	"\x1b[",
	"Traceback (most recent call last):\n  File \"x\", line 1\nValueError: x",
	"Traceback (most recent call last):\n----",
	"2026-08-22 16:59:44,123 -  - ",
	"",
}

// FuzzClassify: any bytes get a known severity and category, and never panic.
func FuzzClassify(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	severities := []string{debug, info, warning, errorS, "fatal"}
	f.Fuzz(func(t *testing.T, line string) {
		c := classify(line, time.UTC)
		if !slices.Contains(severities, c.severity) {
			t.Fatalf("severity %q for %q", c.severity, line)
		}
		if !slices.Contains(Categories, c.category) {
			t.Fatalf("category %q for %q", c.category, line)
		}
		if c.number != severityNumbers[c.severity] {
			t.Fatalf("severity number %d does not go with %q", c.number, c.severity)
		}
		if c.text == "" {
			t.Fatalf("no severity text for %q", line)
		}
		if strings.Contains(c.body, "\x1b[") && strings.Count(c.body, "\x1b") == strings.Count(line, "\x1b") {
			t.Fatalf("colour codes kept in %q", c.body)
		}
	})
}

// FuzzLoggingLine: whatever the message, a line in mlx_lm's format keeps its
// time and level.
func FuzzLoggingLine(f *testing.F) {
	f.Add("Prompt Cache: 4 sequences, 0.03 GB", uint8(1), uint16(123))
	f.Add(" - INFO - ", uint8(3), uint16(0))
	f.Add("", uint8(0), uint16(999))
	names := []string{"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}
	f.Fuzz(func(t *testing.T, message string, level uint8, ms uint16) {
		name := names[int(level)%len(names)]
		ms %= 1000
		line := fmt.Sprintf("2026-08-22 16:59:44,%03d - %s - %s", ms, name, message)
		c := classify(line, time.UTC)
		if c.text != name {
			t.Fatalf("level %q read as %q from %q", name, c.text, line)
		}
		want := time.Date(2026, 8, 22, 16, 59, 44, int(ms)*int(time.Millisecond), time.UTC)
		if !c.time.Equal(want) {
			t.Fatalf("time %v, want %v, from %q", c.time, want, line)
		}
		if c.category == CategoryHTTP {
			t.Fatalf("a logging line taken for the access log: %q", line)
		}
	})
}
