package proxyreceiver

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mlx-otelcol/mlx-otelcol/proxy"
)

// accessToLogs turns access records into one OTLP log record each, under
// the logger name the original used (mlx.proxy.http), with the request's
// trace and span ids. Attribute keys are OTel's HTTP semantic conventions.
func accessToLogs(recs []*proxy.AccessRecord) plog.Logs {
	ld, lrs := newProxyLogs(proxy.AccessLogger, len(recs))
	for _, a := range recs {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(a.End))
		lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(a.End))
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
		lr.Body().SetStr(a.Line())
		if a.TraceID.IsValid() {
			lr.SetTraceID(pcommon.TraceID(a.TraceID))
			lr.SetSpanID(pcommon.SpanID(a.SpanID))
		}
		at := lr.Attributes()
		at.PutStr(attrHttpRequestMethod, a.Method)
		at.PutStr(attrUrlPath, a.Path)
		if a.Status != 0 {
			at.PutInt(attrHttpResponseStatusCode, int64(a.Status))
		}
		at.PutStr(attrNetworkProtocolVersion, protocolVersion(a.Proto))
		at.PutStr(attrClientAddress, a.ClientAddress)
		if a.UserAgent != "" {
			at.PutStr(attrUserAgentOriginal, a.UserAgent)
		}
		if a.Client != "" {
			at.PutStr(attrMlxClient, a.Client)
		}
		at.PutDouble(attrMlxDurationSeconds, a.End.Sub(a.Start).Seconds())
		if a.Upstream != "" {
			at.PutStr(attrMlxUpstream, a.Upstream)
		}
		if a.UpstreamNode != "" {
			at.PutStr(attrMlxNode, a.UpstreamNode)
		}
	}
	return ld
}

// protocolVersion is "1.1" of "HTTP/1.1".
func protocolVersion(proto string) string {
	const prefix = "HTTP/"
	if len(proto) > len(prefix) && proto[:len(prefix)] == prefix {
		return proto[len(prefix):]
	}
	return proto
}

// newProxyLogs is the envelope of the proxy's log records: one resource
// (service.name of the proxy) and one scope, with room for n records.
func newProxyLogs(scope string, n int) (plog.Logs, plog.LogRecordSlice) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(attrServiceName, proxy.ServiceName)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scope)
	lrs := sl.LogRecords()
	lrs.EnsureCapacity(n)
	return ld, lrs
}
