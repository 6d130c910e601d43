// Package opikid derives the Opik trace id of an OpenTelemetry trace.
//
// Opik keys traces by UUIDv7 and, unless told otherwise, maps an OTel trace
// id to an id of its own (a hash with a timestamp, cached for a few hours),
// which nothing outside Opik can compute. The opik exporter therefore sets
// the override attribute opik.trace_id on the spans it sends, to the id
// TraceID derives; anything that knows a span's trace id and start time
// (the judge loop reading Jaeger, a user with a trace id from a log line)
// finds the same Opik trace.
//
// The derivation, a UUIDv7 (RFC 9562 §5.7):
//
//	unix_ts_ms (48 bits) = the span's start time in Unix milliseconds
//	ver        (4 bits)  = 7
//	rand_a     (12 bits) = the low 4 bits of h[0], then h[1]
//	var        (2 bits)  = 0b10
//	rand_b     (62 bits) = the low 6 bits of h[2], then h[3..9]
//
// where h = SHA-256("mlx-otelcol/opik-trace-id" || the 16 bytes of the
// trace id). The same trace id and start give the same UUID everywhere.
package opikid

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"time"
)

// salt keeps these ids apart from any other hash of a trace id.
const salt = "mlx-otelcol/opik-trace-id"

// TraceID is the Opik trace id of the trace traceID, stamped on a span that
// started at start (the root span, or the proxy's span when it continued
// a client's trace).
func TraceID(traceID [16]byte, start time.Time) string {
	h := sha256.Sum256(append([]byte(salt), traceID[:]...))
	var u [16]byte
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(start.UnixMilli()))
	copy(u[0:6], ms[2:8])
	u[6] = 0x70 | h[0]&0x0f
	u[7] = h[1]
	u[8] = 0x80 | h[2]&0x3f
	copy(u[9:16], h[3:10])
	return format(u)
}

func format(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	return string(b[:])
}

// Parse reads a UUID in its 36-character form.
func Parse(s string) ([16]byte, error) {
	var u [16]byte
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, errors.New("not a UUID")
	}
	hexits := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	if _, err := hex.Decode(u[:], []byte(hexits)); err != nil {
		return u, errors.New("not a UUID")
	}
	return u, nil
}

// IsV7 reports whether s is a UUID of version 7 and the RFC 9562 variant.
func IsV7(s string) bool {
	u, err := Parse(s)
	return err == nil && u[6]>>4 == 7 && u[8]>>6 == 0b10
}

// Time is the Unix millisecond timestamp of a UUIDv7.
func Time(s string) (time.Time, error) {
	u, err := Parse(s)
	if err != nil {
		return time.Time{}, err
	}
	var ms [8]byte
	copy(ms[2:8], u[0:6])
	return time.UnixMilli(int64(binary.BigEndian.Uint64(ms[:]))), nil
}
