package supervisorreceiver

import (
	"bytes"
	"regexp"
	"sync"
)

// The generation thread's death. mlx_lm serves every completion from one
// Thread(target=self._generate) (mlx_lm v0.31.3 server.py,
// ResponseGenerator.__init__). An
// exception that escapes it kills it, and threading.excepthook prints
// "Exception in thread Thread-N (_generate):" and the traceback; the
// process and its HTTP threads live on, /health answers 200, and every
// completion waits for ever (ResponseGenerator.generate's
// response_queue.get(), mlx_lm v0.31.3 server.py). No
// exit status will come. It happens on a Metal fault under MLX >= 0.32
// (ml-explore/mlx a025496c8: RuntimeError: [METAL] Command buffer execution
// failed, thrown in the thread that synchronizes), on a failed
// [metal::malloc], on a failed model load under mlx-lm 0.31 (load_default
// runs in that thread: ResponseGenerator._generate calls it first), and on
// a stop value the batched path cannot use (_generate calls
// _make_state_machine outside the try that guards _tokenize). The
// supervisor treats the line as the crash it is: the engine is stopped at
// once and restarted, the reason read from the
// traceback that follows the line (crashRules), not from older lines.
//
// Only the engine's own output is read. A client could get text into it
// through mlx_lm's "JSONDecodeError ... Raw body:" line, but only by
// posting a body that is not JSON straight to the engine: the proxy
// answers such bodies itself (proxy/parse.go) and the engine listens on
// loopback.

// The same goes for the main thread: a traceback whose first frame is the
// script's <module> means main() raised (a failed bind: mlx_lm v0.31.3
// server.py, run, makes the ResponseGenerator and its generation thread
// before _run_http_server binds), and
// the interpreter then waits for the non-daemon generation thread for
// ever: the process stays, with no HTTP server. The per-request tracebacks
// socketserver prints start in process_request_thread, never <module>.

// deathMarker begins threading.excepthook's report of the generation thread.
var (
	deathPrefix   = []byte("Exception in thread ")
	deathSuffix   = []byte("(_generate):")
	tracebackLine = []byte("Traceback (most recent call last):")
	moduleFrame   = regexp.MustCompile(`^  File "[^"]*", line \d+, in <module>$`)
)

// threadWatch scans the engine's output for deathMarker at the start of a
// line and signals died once per process.
type threadWatch struct {
	mu      sync.Mutex
	partial []byte // the current line so far (bounded)
	// afterTraceback: the last whole line began a traceback.
	afterTraceback bool
	fired          bool
	died           chan struct{}
}

func newThreadWatch() *threadWatch { return &threadWatch{died: make(chan struct{})} }

// Write never fails: the engine's output is copied on only while every
// writer takes all of it.
func (w *threadWatch) Write(p []byte) (int, error) {
	n := len(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fired {
		return n, nil
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := 256 - len(w.partial); room > 0 {
			w.partial = append(w.partial, chunk[:min(room, len(chunk))]...)
		}
		if i < 0 {
			break
		}
		line := bytes.TrimRight(w.partial, "\r")
		if isDeathLine(line) || (w.afterTraceback && moduleFrame.Match(line)) {
			w.fired = true
			close(w.died)
			return n, nil
		}
		w.afterTraceback = bytes.Equal(line, tracebackLine)
		w.partial = w.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

func isDeathLine(line []byte) bool {
	line = bytes.TrimRight(line, "\r")
	return bytes.HasPrefix(line, deathPrefix) && bytes.HasSuffix(line, deathSuffix)
}

// deathText is the tail from the last death line on: the traceback that
// names the reason, without older lines.
func deathText(tail []byte) []byte {
	for i := len(tail); i > 0; {
		j := bytes.LastIndex(tail[:i], deathPrefix)
		if j < 0 {
			break
		}
		if j == 0 || tail[j-1] == '\n' {
			end := bytes.IndexByte(tail[j:], '\n')
			if end < 0 || isDeathLine(tail[j:j+end]) {
				return tail[j:]
			}
		}
		i = j
	}
	return tail
}
