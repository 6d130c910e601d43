package proxyreceiver

import (
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mlx-otelcol/mlx-otelcol/proxy"
)

// LiveScope is the instrumentation scope of the live stream records.
const LiveScope = "mlx.proxy.live"

// liveToLogs turns live records into log records as VeloBenchmark's
// receiver reads them (src/telemetry.rs): every attribute a stringValue
// (it reads no other type), the chunk as a JSON string body, the time in
// time_unix_nano.
func liveToLogs(recs []*proxy.LiveRecord) plog.Logs {
	ld, lrs := newProxyLogs(LiveScope, len(recs))
	for _, r := range recs {
		lr := lrs.AppendEmpty()
		ts := pcommon.NewTimestampFromTime(r.Time)
		lr.SetTimestamp(ts)
		lr.SetObservedTimestamp(ts)
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		at := lr.Attributes()
		at.PutStr(attrEvent, r.Event)
		at.PutStr(attrModelId, r.ModelID)
		at.PutStr(attrTopology, r.Topology)
		if r.Event != proxy.LiveStatus {
			at.PutStr(attrRequestId, r.RequestID)
			at.PutStr(attrGenerationId, r.GenerationID)
		}
		if r.TokenIndex >= 0 {
			at.PutStr(attrTokenIndex, strconv.Itoa(r.TokenIndex))
		}
		if r.Body != nil {
			lr.Body().SetStr(string(r.Body))
		}
	}
	return ld
}
