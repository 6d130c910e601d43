package loghealth

import "go.opentelemetry.io/collector/pdata/plog"

// AttrSeverity is the record attribute that carries the original tailer's
// severity word; the classification processor sets it on every record.
const AttrSeverity = "mlx.log.severity"

// The values of mlx.log.severity and of the severity label (the original's
// words).
const (
	SeverityDebug   = "debug"
	SeverityInfo    = "info"
	SeverityWarning = "warning"
	SeverityError   = "error"
	SeverityFatal   = "fatal"
	// SeverityUnspecified: a record that no classification reached and that
	// carries no severity number.
	SeverityUnspecified = "unspecified"
)

// SeverityOf is the severity label of a record: its mlx.log.severity, else
// the word for its severity number.
func SeverityOf(lr plog.LogRecord) string {
	if v, ok := lr.Attributes().Get(AttrSeverity); ok {
		if s := v.Str(); s != "" {
			return s
		}
	}
	return severityWord(lr.SeverityNumber())
}

func severityWord(n plog.SeverityNumber) string {
	switch {
	case n == plog.SeverityNumberUnspecified:
		return SeverityUnspecified
	case n < plog.SeverityNumberInfo:
		return SeverityDebug
	case n < plog.SeverityNumberWarn:
		return SeverityInfo
	case n < plog.SeverityNumberError:
		return SeverityWarning
	case n < plog.SeverityNumberFatal:
		return SeverityError
	default:
		return SeverityFatal
	}
}

// CountBySeverity counts the records of ld by severity label.
func CountBySeverity(ld plog.Logs) map[string]uint64 {
	counts := map[string]uint64{}
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				counts[SeverityOf(lrs.At(k))]++
			}
		}
	}
	return counts
}
