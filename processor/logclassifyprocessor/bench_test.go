package logclassifyprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// benchLines is a busy engine's log: per request a cache block, prefill
// progress and an access line, now and then a warning or an error.
func benchLines(n int) []string {
	shapes := []string{
		"2026-08-22 16:59:44,%03d - INFO - Prompt Cache: 4 sequences, 0.03 GB",
		"2026-08-22 16:59:44,%03d - INFO - - assistant: 3 sequences, 0.02 GB",
		"2026-08-22 16:59:44,%03d - INFO - - user: 1 sequences, 0.01 GB",
		"2026-08-22 16:59:44,%03d - INFO - - system: 0 sequences, 0.00 GB",
		"2026-08-22 16:59:44,%03d - INFO - Prompt processing progress: 2048/8192",
		"127.0.0.1 - - [22/Aug/2026 16:59:44] \"POST /v1/chat/completions HTTP/1.1\" 200 - %d",
		"2026-08-22 16:59:44,%03d - WARNING - Received tools but model does not support tool calling.",
		"[ring] connection to a peer was lost %d",
		"Fetching 9 files: 100%%|██████████| 9/9 [00:00<00:00, %d.1it/s]",
	}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(shapes[i%len(shapes)], i%1000)
	}
	return out
}

// BenchmarkProcessor reports records per second on one core: classification,
// attributes, the access-log filter and the counting, as in the pipeline.
func BenchmarkProcessor(b *testing.B) {
	cfg := createDefaultConfig().(*Config)
	cfg.HealthKey = b.Name()
	c, err := newClassifier(cfg, time.Now)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 1000
	lines := benchLines(batch)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ld := logsOf(lines...)
		b.StartTimer()
		if _, err := c.processLogs(context.Background(), ld); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkClassify is the classification alone, per line.
func BenchmarkClassify(b *testing.B) {
	lines := benchLines(1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = classify(lines[i%len(lines)], time.UTC)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
