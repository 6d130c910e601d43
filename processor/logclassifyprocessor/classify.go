package logclassifyprocessor

import (
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"
)

// class is what the classification found out about one record.
type class struct {
	severity string              // mlx.log.severity
	number   plog.SeverityNumber // OTel severity number
	text     string              // severity text: the level as printed, else the severity in capitals
	category string              // mlx.log.category
	time     time.Time           // when the engine wrote it; zero if the line does not say
	body     string              // the body without colour codes
	access   *accessLine         // set for access-log lines
	excType  string              // for tracebacks: the exception's type and message
	excMsg   string
}

// levels maps Python's level names to severities.
var levels = map[string]struct {
	severity string
	number   plog.SeverityNumber
}{
	"DEBUG":    {debug, plog.SeverityNumberDebug},
	"INFO":     {info, plog.SeverityNumberInfo},
	"WARNING":  {warning, plog.SeverityNumberWarn},
	"WARN":     {warning, plog.SeverityNumberWarn},
	"ERROR":    {errorS, plog.SeverityNumberError},
	"CRITICAL": {loghealth.SeverityFatal, plog.SeverityNumberFatal},
	"FATAL":    {loghealth.SeverityFatal, plog.SeverityNumberFatal},
}

var severityNumbers = map[string]plog.SeverityNumber{
	debug:                   plog.SeverityNumberDebug,
	info:                    plog.SeverityNumberInfo,
	warning:                 plog.SeverityNumberWarn,
	errorS:                  plog.SeverityNumberError,
	loghealth.SeverityFatal: plog.SeverityNumberFatal,
}

// classify reads one record's body. loc is the zone of the engine's
// timestamps.
func classify(body string, loc *time.Location) class {
	c := class{body: stripANSI(body)}
	message := c.body
	hasLevel := false
	if ts, level, msg, ok := parseLoggingLine(c.body, loc); ok {
		c.time, message = ts, msg
		if l, known := levels[level]; known {
			c.severity, c.number, c.text, hasLevel = l.severity, l.number, level, true
		}
	} else if a, ok := parseAccessLine(c.body, loc); ok {
		c.time, c.access = a.time, &a
		c.category = CategoryHTTP
		if a.error {
			c.category = CategoryError
		}
		c.setSeverity(statusSeverity(a.status))
		return c
	}

	if r, ok := match(message, hasLevel); ok {
		c.category = r.category
		if !hasLevel {
			c.setSeverity(r.severity)
		}
	} else {
		if !hasLevel {
			c.setSeverity(info)
		}
		c.category = CategoryOther
		if c.number >= plog.SeverityNumberError {
			c.category = CategoryError
		}
	}
	if c.category == CategoryPython || c.category == CategoryGPU {
		c.excType, c.excMsg, _ = exceptionOf(c.body)
	}
	return c
}

func (c *class) setSeverity(s string) {
	c.severity, c.number, c.text = s, severityNumbers[s], strings.ToUpper(s)
}

// statusSeverity: a 5xx is an error, a 4xx a warning.
func statusSeverity(status int) string {
	switch {
	case status >= 500:
		return errorS
	case status >= 400:
		return warning
	default:
		return info
	}
}
