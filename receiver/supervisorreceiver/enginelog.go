package supervisorreceiver

import (
	"bytes"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// The engine's output and environment.

// logSink is the engine's stdout and stderr: the rotating log file (and
// the crash-reason tail). It never returns an error to the pipe that
// copies the engine's output: exec stops copying at the first error, and
// an engine whose pipe is not read blocks on its next print. A failed
// write (a full disk) is counted (mlx_server_log_write_errors_total) and
// logged at most once a minute; the engine runs on, and its lines are
// lost until the disk has room again.
type logSink struct {
	out    io.Writer
	st     *status
	logger *zap.Logger
	warned atomic.Int64 // unix seconds of the last warning
}

func (s *logSink) Write(p []byte) (int, error) {
	if showsGeneration(p) {
		s.st.lastOutput.Store(time.Now().UnixNano()) // the engine works: it printed
	}
	if _, err := s.out.Write(p); err != nil {
		s.st.mu.Lock()
		s.st.logWriteErrors++
		s.st.mu.Unlock()
		now := time.Now().Unix()
		if last := s.warned.Load(); now-last >= 60 && s.warned.CompareAndSwap(last, now) {
			s.logger.Warn("Cannot write the engine's log; its lines are lost until this clears (counted in mlx_server_log_write_errors_total)", zap.Error(err))
		}
	}
	return len(p), nil
}

// showsGeneration reports whether output may come from the generation
// thread's work: any line but the access line (and error line) of a
// request mlx_lm's HTTP threads answer alone. GET /health, GET /v1/models
// and OPTIONS are served while the generation thread is dead or wedged,
// and the proxy's upstream probe and a user's model list send them all
// the time, so their lines are no sign of progress. The access line is
// BaseHTTPRequestHandler.log_request's: `ADDR - - [DATE] "REQUESTLINE"
// CODE SIZE`; log_error's "code N, message M" precedes a send_error.
func showsGeneration(p []byte) bool {
	for line := range bytes.Lines(p) {
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 || httpThreadLine(line) {
			continue
		}
		return true
	}
	return false
}

func httpThreadLine(line []byte) bool {
	_, rest, ok := bytes.Cut(line, []byte(" - - ["))
	if !ok {
		return false
	}
	_, msg, ok := bytes.Cut(rest, []byte("] "))
	if !ok {
		return false
	}
	for _, m := range [][]byte{[]byte(`"GET `), []byte(`"OPTIONS `), []byte(`"HEAD `), []byte("code ")} {
		if bytes.HasPrefix(msg, m) {
			return true
		}
	}
	return false
}

// passedEnv are the variables of the collector's environment the engine
// gets: what a Python program, the MLX runtime and the Hugging Face hub
// read, and nothing else (the collector's exporter credentials stay
// out). Entries ending in "_" are prefixes. Config.Env and
// Config.EnvPassthrough add to it.
var passedEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TMP", "TEMP", "LANG", "TZ", "TERM",
	"LC_", "PYTHON", "VIRTUAL_ENV", "CONDA_", "HF_", "HUGGINGFACE_", "TRANSFORMERS_", "MLX_", "METAL_", "DYLD_", "LD_LIBRARY_PATH",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"OMP_", "TOKENIZERS_",
}

// neverPassed are the collector's own secrets among the allowed prefixes:
// the proxy's metrics token is an MLX_ variable, but not the engine's.
var neverPassed = []string{"MLX_METRICS_TOKEN"}

// engineEnv is the engine's environment: the allowed part of environ, the
// passthrough names, then env (which wins).
func engineEnv(environ []string, passthrough []string, env map[string]string) []string {
	allowed := func(name string) bool {
		if slices.Contains(neverPassed, name) && !slices.Contains(passthrough, name) {
			return false
		}
		for _, a := range append(passedEnv, passthrough...) {
			if name == a || (strings.HasSuffix(a, "_") && strings.HasPrefix(name, a)) || (a == "PYTHON" && strings.HasPrefix(name, a)) {
				return true
			}
		}
		return false
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if _, override := env[name]; !override && allowed(name) {
			out = append(out, kv)
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

var environ = os.Environ
