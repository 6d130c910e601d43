package kvcachereceiver

import (
	"bytes"
	"time"
)

// The engine logs through Python's logging with the fixed format
// "%(asctime)s - %(levelname)s - %(message)s" (mlx_lm v0.31.3 server.py,
// main's logging.basicConfig), e.g.
//
//	2026-08-22 16:59:44,123 - INFO - Prompt Cache: 4 sequences, 0.03 GB
//
// parseLine recognises the few INFO messages this receiver needs and
// nothing else; every other line is lineOther. It works on raw bytes: the
// log may hold any bytes (model output, broken UTF-8), and none of them can
// make it fail.

// lineKind says what a log line is to this receiver.
type lineKind uint8

const (
	lineOther lineKind = iota
	// linePromptCache opens the 4-line block of mlx-lm >= 0.31.2:
	// "Prompt Cache: N sequences, X GB".
	linePromptCache
	// lineCacheType is one of the block's other lines:
	// "- assistant: N sequences, X GB".
	lineCacheType
	// lineKVCaches is the one-line form of mlx-lm 0.31.0-0.31.1:
	// "KV Caches: N seq, X GB, latest user cache T tokens".
	lineKVCaches
	// lineServerStart is "Starting httpd at HOST on port PORT...": a new
	// engine process, with an empty prompt cache.
	lineServerStart
)

// Cache types, in the order mlx_lm's LRUPromptCache.CacheOrder prints them.
const (
	typeAssistant = iota
	typeUser
	typeSystem
	numCacheTypes
	typeUnknown = -1
)

// cacheTypeNames are the values of the type label, by cache type.
var cacheTypeNames = [numCacheTypes]string{"assistant", "user", "system"}

// usage is a sequence count and its size as the engine printed it.
type usage struct {
	Sequences int64
	Bytes     int64
}

// logLine is what parseLine found in one line.
type logLine struct {
	Kind      lineKind
	CacheType int // for lineCacheType: typeAssistant.., or typeUnknown
	Usage     usage
	// Tokens is the "latest user cache T tokens" of lineKVCaches.
	Tokens int64
	// Time is the record's asctime, zero when the line carries none.
	Time time.Time
}

const (
	infoMarker = " - INFO - "
	// asctimeLayout is logging.Formatter's default time format.
	asctimeLayout = "2006-01-02 15:04:05,000"
	asctimeLen    = len(asctimeLayout)
)

// parseLine classifies one log line (without its line feed).
func parseLine(line []byte) logLine {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	msg, ts, ok := infoMessage(line)
	if !ok {
		return logLine{}
	}
	var l logLine
	switch {
	case bytes.HasPrefix(msg, []byte("Prompt Cache: ")):
		u, ok := parseUsage(msg[len("Prompt Cache: "):], " sequences, ", nil)
		if !ok {
			return logLine{}
		}
		l = logLine{Kind: linePromptCache, Usage: u}
	case bytes.HasPrefix(msg, []byte("- ")):
		name, rest, ok := bytes.Cut(msg[2:], []byte(": "))
		if !ok || !isIdentifier(name) {
			return logLine{}
		}
		u, ok := parseUsage(rest, " sequences, ", nil)
		if !ok {
			return logLine{}
		}
		l = logLine{Kind: lineCacheType, CacheType: cacheTypeOf(name), Usage: u}
	case bytes.HasPrefix(msg, []byte("KV Caches: ")):
		var tokens int64
		u, ok := parseUsage(msg[len("KV Caches: "):], " seq, ", func(tail []byte) bool {
			tail, ok := bytes.CutPrefix(tail, []byte(", latest user cache "))
			if !ok {
				return false
			}
			n, rest, ok := parseCount(tail)
			tokens = n
			return ok && string(rest) == " tokens"
		})
		if !ok {
			return logLine{}
		}
		l = logLine{Kind: lineKVCaches, Usage: u, Tokens: tokens}
	case bytes.HasPrefix(msg, []byte("Starting httpd at ")) && bytes.HasSuffix(msg, []byte("...")):
		l = logLine{Kind: lineServerStart}
	default:
		return logLine{}
	}
	l.Time = ts
	return l
}

// infoMessage returns the message of an INFO record. A line that starts
// with an asctime must have its level right after it, so that a DEBUG
// record quoting a request body (which a client controls) cannot pass for
// an INFO one. A line without an asctime (a prefix added by a launcher, or
// a custom format) is accepted from its first " - INFO - ".
func infoMessage(line []byte) (msg []byte, ts time.Time, ok bool) {
	if len(line) >= asctimeLen && looksLikeAsctime(line[:asctimeLen]) {
		if !bytes.HasPrefix(line[asctimeLen:], []byte(infoMarker)) {
			return nil, time.Time{}, false
		}
		return line[asctimeLen+len(infoMarker):], asctimeOf(line[:asctimeLen]), true
	}
	i := bytes.Index(line, []byte(infoMarker))
	if i < 0 {
		return nil, time.Time{}, false
	}
	return line[i+len(infoMarker):], time.Time{}, true
}

// looksLikeAsctime checks the shape "dddd-dd-dd dd:dd:dd,ddd".
func looksLikeAsctime(b []byte) bool {
	for i, c := range b {
		switch asctimeLayout[i] {
		case '-', ' ', ':', ',':
			if c != asctimeLayout[i] {
				return false
			}
		default:
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

// asctimeOf reads a timestamp of looksLikeAsctime's shape; zero when a
// field is out of range. The engine writes local time without a zone; it
// runs on the collector's host, so the collector's zone is the engine's.
// (Hand-written rather than time.ParseInLocation: it does not allocate.)
func asctimeOf(b []byte) time.Time {
	num := func(from, to int) int {
		n := 0
		for _, c := range b[from:to] {
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(0, 4), num(5, 7), num(8, 10)
	hour, minute, sec, msec := num(11, 13), num(14, 16), num(17, 19), num(20, 23)
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 60 {
		return time.Time{}
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, msec*int(time.Millisecond), time.Local)
}

// parseUsage reads "N<sep>X GB" to the end of b. When tail is nil nothing
// may follow " GB"; otherwise tail must accept what follows.
func parseUsage(b []byte, sep string, tail func([]byte) bool) (usage, bool) {
	n, rest, ok := parseCount(b)
	if !ok || !bytes.HasPrefix(rest, []byte(sep)) {
		return usage{}, false
	}
	size, rest, ok := parseGB(rest[len(sep):])
	if !ok || !bytes.HasPrefix(rest, []byte(" GB")) {
		return usage{}, false
	}
	rest = rest[len(" GB"):]
	if tail == nil && len(rest) != 0 || tail != nil && !tail(rest) {
		return usage{}, false
	}
	return usage{Sequences: n, Bytes: size}, true
}

// maxCountDigits keeps counts far from int64 overflow.
const maxCountDigits = 15

// parseCount reads a decimal count at the start of b.
func parseCount(b []byte) (n int64, rest []byte, ok bool) {
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if i == maxCountDigits {
			return 0, b, false
		}
		n = n*10 + int64(b[i]-'0')
	}
	return n, b[i:], i > 0
}

// parseGB reads the engine's "{x:.2f}" of a size in 1e9-byte units and
// returns it in bytes, exactly: "0.03" is 30,000,000. Any number of
// decimals up to 9 is accepted.
func parseGB(b []byte) (bytesValue int64, rest []byte, ok bool) {
	whole, rest, ok := parseCount(b)
	if !ok || whole > 9_000_000 { // 9e6 GB = 9e15 bytes, far inside int64
		return 0, b, false
	}
	bytesValue = whole * 1e9
	if len(rest) == 0 || rest[0] != '.' {
		return bytesValue, rest, true
	}
	rest = rest[1:]
	scale := int64(1e8)
	i := 0
	for ; i < len(rest) && rest[i] >= '0' && rest[i] <= '9'; i++ {
		if i == 9 {
			return 0, b, false
		}
		bytesValue += int64(rest[i]-'0') * scale
		scale /= 10
	}
	if i == 0 {
		return 0, b, false
	}
	return bytesValue, rest[i:], true
}

func isIdentifier(b []byte) bool {
	if len(b) == 0 || len(b) > 32 {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func cacheTypeOf(name []byte) int {
	for i, n := range cacheTypeNames {
		if string(name) == n {
			return i
		}
	}
	return typeUnknown
}
