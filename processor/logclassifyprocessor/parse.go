package logclassifyprocessor

import (
	"strconv"
	"strings"
	"time"
)

// loggingLine is mlx_lm's logging format,
// `%(asctime)s - %(levelname)s - %(message)s`, e.g.
// `2026-08-22 16:59:44,123 - INFO - Prompt Cache: 4 sequences, 0.03 GB`.
// asctime is local time without a zone; loc says which.
func parseLoggingLine(s string, loc *time.Location) (ts time.Time, level, message string, ok bool) {
	const tsLen = len("2006-01-02 15:04:05,000")
	if len(s) < tsLen+len(" - X - ") || s[tsLen:tsLen+3] != " - " {
		return time.Time{}, "", "", false
	}
	ts, ok = parseASCTime(s[:tsLen], loc)
	if !ok {
		return time.Time{}, "", "", false
	}
	rest := s[tsLen+3:]
	end := strings.Index(rest, " - ")
	if end <= 0 || end > len("CRITICAL") {
		return time.Time{}, "", "", false
	}
	return ts, rest[:end], rest[end+3:], true
}

// parseASCTime reads `2006-01-02 15:04:05,000` by hand: time.Parse costs
// more than the rest of the classification.
func parseASCTime(s string, loc *time.Location) (time.Time, bool) {
	if s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' || s[19] != ',' {
		return time.Time{}, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	sec, ok6 := digits(s[17:19])
	ms, ok7 := digits(s[20:23])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 60 {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, ms*int(time.Millisecond), loc), true
}

func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// accessLine is a line of Python's http.server log (BaseHTTPRequestHandler
// log_message): `<client> - - [22/Aug/2026 16:59:44] <message>`, where the
// message is `"<request line>" <status> <size>` for a request, or
// `code <status>, message <text>` for an error the server answered itself.
type accessLine struct {
	time   time.Time
	client string
	method string
	target string
	status int  // 0 if none could be read
	error  bool // a log_error line (`code 400, message ...`)
}

func parseAccessLine(s string, loc *time.Location) (accessLine, bool) {
	const sep = " - - ["
	i := strings.Index(s, sep)
	if i <= 0 || strings.IndexByte(s[:i], ' ') >= 0 {
		return accessLine{}, false
	}
	rest := s[i+len(sep):]
	const dateLen = len("22/Aug/2026 16:59:44")
	if len(rest) < dateLen+2 || rest[dateLen:dateLen+2] != "] " {
		return accessLine{}, false
	}
	ts, err := time.ParseInLocation("02/Jan/2006 15:04:05", rest[:dateLen], loc)
	if err != nil {
		return accessLine{}, false
	}
	a := accessLine{time: ts, client: s[:i]}
	msg := rest[dateLen+2:]
	switch {
	case strings.HasPrefix(msg, `"`):
		end := strings.LastIndex(msg, `" `)
		if end <= 0 {
			return a, true
		}
		fields := strings.Fields(msg[1:end])
		if len(fields) >= 2 {
			a.method, a.target = fields[0], fields[1]
		}
		tail := strings.Fields(msg[end+2:])
		if len(tail) > 0 {
			a.status, _ = strconv.Atoi(tail[0])
		}
	case strings.HasPrefix(msg, "code "):
		a.error = true
		code, _, _ := strings.Cut(msg[len("code "):], ",")
		a.status, _ = strconv.Atoi(code)
	}
	return a, true
}

// stripANSI removes terminal escape sequences (mlx.launch colours its
// warnings: `\033[33m[WARN] ... \033[0m`).
func stripANSI(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != 0x1b {
			b.WriteByte(s[i])
			continue
		}
		// CSI: ESC [ parameters... final byte in @..~
		if i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		i++ // ESC and the one byte after it
	}
	return b.String()
}

// exceptionOf returns the type and message of the last exception line of a
// traceback record (`ValueError: temperature must be at least 0`).
func exceptionOf(body string) (typ, message string, ok bool) {
	if !strings.Contains(body, "Traceback (most recent call last):") {
		return "", "", false
	}
	lines := strings.Split(body, "\n") // tracebacks are rare: clarity over allocations
	for i := len(lines) - 1; i >= 0; i-- {
		ln := strings.TrimRight(lines[i], "\r")
		// Skip socketserver's closing dashes, blank lines and indented frames.
		if strings.Trim(ln, "-") == "" || ln[0] == ' ' || ln[0] == '\t' {
			continue
		}
		name, msg, _ := strings.Cut(ln, ": ")
		if !isDottedIdentifier(name) {
			return "", "", false
		}
		return name, msg, true
	}
	return "", "", false
}

func isDottedIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case (c >= '0' && c <= '9') || c == '.':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}
