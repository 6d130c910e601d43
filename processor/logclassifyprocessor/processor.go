package logclassifyprocessor

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"
)

// classifier is the processor's state.
type classifier struct {
	cfg     *Config
	loc     *time.Location
	stats   *loghealth.Stats
	limiter *tokenBucket // nil when the rate limit is off
	now     func() time.Time
}

func newClassifier(cfg *Config, now func() time.Time) (*classifier, error) {
	loc, err := time.LoadLocation(cfg.Timezone)
	if err != nil {
		return nil, err
	}
	c := &classifier{cfg: cfg, loc: loc, stats: loghealth.For(cfg.HealthKey), now: now}
	if cfg.RateLimit.enabled() {
		c.limiter = newTokenBucket(cfg.RateLimit.LinesPerSecond, cfg.RateLimit.burst(), now())
	}
	return c, nil
}

func (c *classifier) start(context.Context, component.Host) error {
	c.stats.ProcessorStarted()
	return nil
}

func (c *classifier) shutdown(context.Context) error {
	c.stats.ProcessorStopped()
	return nil
}

// batchCounts are one batch's counts, added to the pipeline's Stats once.
type batchCounts struct {
	lines   map[loghealth.LineKey]uint64
	dropped map[string]uint64 // by reason
}

// processLogs classifies every record, drops what the configuration drops,
// and counts both.
func (c *classifier) processLogs(_ context.Context, ld plog.Logs) (plog.Logs, error) {
	counts := batchCounts{lines: map[loghealth.LineKey]uint64{}, dropped: map[string]uint64{}}
	now := c.now()
	ld.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool {
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool {
			sl.LogRecords().RemoveIf(func(lr plog.LogRecord) bool {
				return c.processRecord(lr, now, &counts)
			})
			return sl.LogRecords().Len() == 0
		})
		return rl.ScopeLogs().Len() == 0
	})
	c.stats.AddClassified(counts.lines, counts.dropped)
	if ld.ResourceLogs().Len() == 0 {
		return ld, processorhelper.ErrSkipProcessingData
	}
	return ld, nil
}

// processRecord classifies lr and says whether to drop it.
func (c *classifier) processRecord(lr plog.LogRecord, now time.Time, counts *batchCounts) (drop bool) {
	body := lr.Body().AsString()
	cl := classify(body, c.loc)
	counts.lines[loghealth.LineKey{Severity: cl.severity, Category: cl.category}]++
	switch {
	case strings.TrimSpace(cl.body) == "":
		counts.dropped[loghealth.ReasonEmpty]++
		return true
	case cl.category == CategoryHTTP && !c.cfg.IncludeHTTP:
		counts.dropped[loghealth.ReasonHTTPFilter]++
		return true
	case c.limiter != nil && !c.limiter.allow(now):
		counts.dropped[loghealth.ReasonRateLimit]++
		return true
	}
	c.apply(lr, body, cl)
	return false
}

// apply writes the classification into the record. Its keys are
// metadata.yaml's (generated_attributes.go).
func (c *classifier) apply(lr plog.LogRecord, body string, cl class) {
	if cl.body != body {
		lr.Body().SetStr(cl.body)
	}
	if !cl.time.IsZero() {
		lr.SetTimestamp(pcommon.NewTimestampFromTime(cl.time))
	}
	lr.SetSeverityNumber(cl.number)
	lr.SetSeverityText(cl.text)
	attrs := lr.Attributes()
	attrs.EnsureCapacity(attrs.Len() + 4)
	attrs.PutStr(attrMlxLogSeverity, cl.severity)
	attrs.PutStr(attrMlxLogCategory, cl.category)
	attrs.PutStr(attrMlxLogSource, c.cfg.Source)
	attrs.PutStr(attrMlxLogProject, c.cfg.Project)
	if a := cl.access; a != nil {
		attrs.PutStr(attrClientAddress, a.client)
		if a.method != "" {
			attrs.PutStr(attrHttpRequestMethod, a.method)
			path, query, hasQuery := strings.Cut(a.target, "?")
			attrs.PutStr(attrUrlPath, path)
			if hasQuery {
				attrs.PutStr(attrUrlQuery, query)
			}
		}
		if a.status > 0 {
			attrs.PutInt(attrHttpResponseStatusCode, int64(a.status))
		}
	}
	if cl.excType != "" {
		attrs.PutStr(attrExceptionType, cl.excType)
		attrs.PutStr(attrExceptionMessage, cl.excMsg)
	}
}
