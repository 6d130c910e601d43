package mlxsim

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// Python logging levels.
const (
	levelDebug    = 10
	levelInfo     = 20
	levelWarning  = 30
	levelError    = 40
	levelCritical = 50
)

var levelNames = map[int]string{
	levelDebug:    "DEBUG",
	levelInfo:     "INFO",
	levelWarning:  "WARNING",
	levelError:    "ERROR",
	levelCritical: "CRITICAL",
}

// ParseLogLevel maps a --log-level choice to its number.
func ParseLogLevel(s string) (int, bool) {
	for n, name := range levelNames {
		if strings.EqualFold(name, s) {
			return n, true
		}
	}
	return 0, false
}

// pyLog writes stderr the way mlx_lm.server does: logging records formatted
// with "%(asctime)s - %(levelname)s - %(message)s", plus the lines that
// bypass logging (http.server's access log, warnings, tracebacks). One mutex
// guards the writer so that no two lines or blocks interleave.
type pyLog struct {
	mu    sync.Mutex
	w     io.Writer
	level int
	now   func() time.Time
}

func newPyLog(w io.Writer, level int, now func() time.Time) *pyLog {
	if w == nil {
		w = io.Discard
	}
	return &pyLog{w: w, level: level, now: now}
}

func (l *pyLog) enabled(level int) bool { return level >= l.level }

// asctime is logging.Formatter's default time format: "2026-08-22 16:59:44,123".
func asctime(t time.Time) string {
	return t.Format("2006-01-02 15:04:05") + fmt.Sprintf(",%03d", t.Nanosecond()/1e6)
}

func (l *pyLog) record(level int, msg string) string {
	return asctime(l.now().Local()) + " - " + levelNames[level] + " - " + msg + "\n"
}

func (l *pyLog) log(level int, msg string) {
	if !l.enabled(level) {
		return
	}
	l.write(l.record(level, msg))
}

// logBlock writes several records atomically (e.g. the 4-line cache block).
func (l *pyLog) logBlock(level int, msgs ...string) {
	if !l.enabled(level) {
		return
	}
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(l.record(level, m))
	}
	l.write(b.String())
}

func (l *pyLog) debug(msg string)   { l.log(levelDebug, msg) }
func (l *pyLog) info(msg string)    { l.log(levelInfo, msg) }
func (l *pyLog) warning(msg string) { l.log(levelWarning, msg) }
func (l *pyLog) error(msg string)   { l.log(levelError, msg) }

// write emits raw text (already newline-terminated) under the lock.
func (l *pyLog) write(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, s)
}

var monthNames = [...]string{"", "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// logDateTime is BaseHTTPRequestHandler.log_date_time_string().
func logDateTime(t time.Time) string {
	return fmt.Sprintf("%02d/%3s/%04d %02d:%02d:%02d", t.Day(), monthNames[t.Month()], t.Year(), t.Hour(), t.Minute(), t.Second())
}

// httpMessage is BaseHTTPRequestHandler.log_message(): "%s - - [%s] %s\n".
func (l *pyLog) httpMessage(addr, msg string) {
	l.write(fmt.Sprintf("%s - - [%s] %s\n", addr, logDateTime(l.now().Local()), escapeControl(msg)))
}

// access is log_request(code): `"POST /v1/chat/completions HTTP/1.1" 200 -`.
func (l *pyLog) access(addr, requestline string, code int) {
	l.httpMessage(addr, fmt.Sprintf("\"%s\" %d -", requestline, code))
}

// escapeControl mirrors http.server's _control_char_table (3.12): C0
// controls and DEL are shown as \xNN.
func escapeControl(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			fmt.Fprintf(&b, `\x%02x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// handleError prints what socketserver.BaseServer.handle_error prints when a
// handler raises: the client address, the traceback, dashes around.
func (l *pyLog) handleError(addr string, port int, exc *pyExc) {
	var b strings.Builder
	b.WriteString(strings.Repeat("-", 40) + "\n")
	fmt.Fprintf(&b, "Exception occurred during processing of request from ('%s', %d)\n", addr, port)
	b.WriteString(formatTraceback(slices.Concat(handlerFrames, exc.frames), exc.line()))
	b.WriteString(strings.Repeat("-", 40) + "\n")
	l.write(b.String())
}

// userWarning is what warnings.warn prints at startup.
func userWarning() string {
	return fmt.Sprintf("%s:%d: UserWarning: mlx_lm.server is not recommended for production as it only implements basic security checks.\n  warnings.warn(\n", serverPy, lineProductionWarning)
}
