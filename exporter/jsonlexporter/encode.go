package jsonlexporter

import (
	"encoding/base64"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

var otlpJSON = &plog.JSONMarshaler{}

// appendOTLPJSON appends the batch as one OTLP/JSON line, the format of
// contrib's file exporter.
func appendOTLPJSON(buf []byte, ld plog.Logs) ([]byte, error) {
	b, err := otlpJSON.MarshalLogs(ld)
	if err != nil {
		return buf, err
	}
	return append(append(buf, b...), '\n'), nil
}

// appendRecords appends one line per record:
//
//	{"timestamp":"2026-08-22T16:59:44.123Z","observed_timestamp":"...",
//	 "severity_text":"INFO","severity_number":9,"body":"...",
//	 "attributes":{...},"resource":{...}}
//
// timestamp is left out when the record has none; event_name (an event's
// name, such as gen_ai.evaluation.result), trace_id and span_id are added
// when set. Timestamps are RFC 3339 in UTC with nanoseconds.
func appendRecords(buf []byte, ld plog.Logs) ([]byte, error) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				buf = appendRecord(buf, lrs.At(k), rl.Resource().Attributes())
			}
		}
	}
	return buf, nil
}

func appendRecord(buf []byte, lr plog.LogRecord, resource pcommon.Map) []byte {
	buf = append(buf, '{')
	if ts := lr.Timestamp(); ts != 0 {
		buf = append(buf, `"timestamp":`...)
		buf = appendTime(buf, ts)
		buf = append(buf, ',')
	}
	buf = append(buf, `"observed_timestamp":`...)
	buf = appendTime(buf, lr.ObservedTimestamp())
	if name := lr.EventName(); name != "" {
		buf = append(buf, `,"event_name":`...)
		buf = appendString(buf, name)
	}
	buf = append(buf, `,"severity_text":`...)
	buf = appendString(buf, lr.SeverityText())
	buf = append(buf, `,"severity_number":`...)
	buf = strconv.AppendInt(buf, int64(lr.SeverityNumber()), 10)
	buf = append(buf, `,"body":`...)
	buf = appendValue(buf, lr.Body())
	buf = append(buf, `,"attributes":`...)
	buf = appendMap(buf, lr.Attributes())
	buf = append(buf, `,"resource":`...)
	buf = appendMap(buf, resource)
	if id := lr.TraceID(); !id.IsEmpty() {
		buf = append(buf, `,"trace_id":`...)
		buf = appendString(buf, id.String())
	}
	if id := lr.SpanID(); !id.IsEmpty() {
		buf = append(buf, `,"span_id":`...)
		buf = appendString(buf, id.String())
	}
	return append(buf, '}', '\n')
}

func appendTime(buf []byte, ts pcommon.Timestamp) []byte {
	buf = append(buf, '"')
	buf = ts.AsTime().UTC().AppendFormat(buf, time.RFC3339Nano)
	return append(buf, '"')
}

func appendMap(buf []byte, m pcommon.Map) []byte {
	buf = append(buf, '{')
	first := true
	m.Range(func(k string, v pcommon.Value) bool {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = appendString(buf, k)
		buf = append(buf, ':')
		buf = appendValue(buf, v)
		return true
	})
	return append(buf, '}')
}

func appendValue(buf []byte, v pcommon.Value) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return appendString(buf, v.Str())
	case pcommon.ValueTypeInt:
		return strconv.AppendInt(buf, v.Int(), 10)
	case pcommon.ValueTypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return appendString(buf, strconv.FormatFloat(f, 'g', -1, 64)) // JSON has no NaN
		}
		return strconv.AppendFloat(buf, f, 'g', -1, 64)
	case pcommon.ValueTypeBool:
		return strconv.AppendBool(buf, v.Bool())
	case pcommon.ValueTypeMap:
		return appendMap(buf, v.Map())
	case pcommon.ValueTypeSlice:
		buf = append(buf, '[')
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendValue(buf, s.At(i))
		}
		return append(buf, ']')
	case pcommon.ValueTypeBytes:
		buf = append(buf, '"')
		buf = base64.StdEncoding.AppendEncode(buf, v.Bytes().AsRaw())
		return append(buf, '"')
	default:
		return append(buf, "null"...)
	}
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD, as
// encoding/json does.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
