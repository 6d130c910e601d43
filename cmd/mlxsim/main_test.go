package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/syncbuf"
)

// binary builds cmd/mlxsim into the test's temporary directory (the build
// cache makes every build after the first one quick).
func binary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mlxsim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type proc struct {
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer
	base   string
	done   chan error
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs the binary with the given flags on a free port and waits until
// /health answers.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	return startBin(t, binary(t), args...)
}

func startBin(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	port := freePort(t)
	args = append([]string{"--port", strconv.Itoa(port), "--sim-prefill-tokens-per-second", "1000000", "--sim-decode-tokens-per-second", "100000"}, args...)
	p := &proc{cmd: exec.Command(bin, args...), stderr: &syncbuf.Buffer{}, base: fmt.Sprintf("http://127.0.0.1:%d", port), done: make(chan error, 1)}
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := (&http.Client{Timeout: time.Second}).Get(p.base + "/health")
		if err == nil {
			resp.Body.Close()
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not come up: %v\n%s", err, p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *proc) chat(t *testing.T, body string) (int, string, error) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Post(p.base+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func (p *proc) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("process did not exit:\n%s", p.stderr.String())
		return nil
	}
}

const hi = `{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 5}`

// stuckInProcess serves the engine the command line args makes, in this
// process, answers one completion, then sends another and waits until
// the engine counts it stuck for ever (mlxsim.Engine.Stuck): a positive
// event, after which whatever the engine had sent is in the socket. It
// says whether nothing was (not even headers).
func stuckInProcess(t *testing.T, args ...string) bool {
	t.Helper()
	cfg, _, ok := parseArgs(append([]string{"--sim-prefill-tokens-per-second", "1000000", "--sim-decode-tokens-per-second", "100000"}, args...), io.Discard)
	if !ok {
		t.Fatalf("flags %v", args)
	}
	e := mlxsim.New(cfg.opts, io.Discard)
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(e.Close)
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(hi))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("first request: %v %v", resp, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(hi), hi)
	deadline := time.Now().Add(10 * time.Second)
	for e.Stuck() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the second completion never waited on the generation thread")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = conn.SetReadDeadline(time.Now())
	n, err := conn.Read(make([]byte, 1))
	return n == 0 && err != nil && strings.Contains(err.Error(), "timeout")
}

func TestRealCommandLineAndStartupLog(t *testing.T) {
	p := start(t, "--model", "mlx-community/Qwen3-4B-4bit", "--host", "127.0.0.1",
		"--chat-template-args", `{"enable_thinking":false}`, "--trust-remote-code", "--log-level", "INFO",
		"--prompt-cache-bytes", "8G", "--prompt-cache-size", "5", "--draft-model", "x", "--num-draft-tokens", "2",
		"--decode-concurrency", "4", "--prompt-concurrency", "2", "--pipeline", "--use-default-chat-template",
		"--top-p", "0.9", "--top-k", "20", "--min-p=0.05", "--allowed-origins", "*", "--adapter-path", "/tmp/a",
		"--chat-template", "", "--max-tokens", "100", "--temp", "0.6", "--prefill-step-size", "512")
	code, body, err := p.chat(t, hi)
	if err != nil || code != 200 || !strings.Contains(body, `"object": "chat.completion"`) {
		t.Fatalf("%d %v %s", code, err, body)
	}
	lines := strings.Split(p.stderr.String(), "\n")
	if !strings.HasSuffix(lines[0], "/mlx_lm/server.py:1692: UserWarning: mlx_lm.server is not recommended for production as it only implements basic security checks.") ||
		lines[1] != "  warnings.warn(" || !strings.HasSuffix(lines[2], fmt.Sprintf(" - INFO - Starting httpd at 127.0.0.1 on port %s...", p.base[strings.LastIndex(p.base, ":")+1:])) {
		t.Errorf("startup lines:\n%s", p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), " - INFO - Prompt Cache: 0 sequences, 0.00 GB\n") {
		t.Errorf("no cache block:\n%s", p.stderr.String())
	}
}

func TestArgparseErrors(t *testing.T) {
	bin := binary(t)
	for args, want := range map[string]string{
		"--bogus":                   "mlx_lm.server: error: unrecognized arguments: --bogus",
		"--log-level info":          "mlx_lm.server: error: argument --log-level: invalid choice: 'info' (choose from 'DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL')",
		"--chat-template-args {":    "mlx_lm.server: error: argument --chat-template-args: invalid loads value: '{'",
		"--prompt-cache-bytes 8T":   "mlx_lm.server: error: argument --prompt-cache-bytes: invalid parse_size value: '8T'",
		"--port notanumber --model": "mlx_lm.server: error: argument --port: invalid value",
		"--kv-bits 4":               "mlx_lm.server: error: unrecognized arguments: --kv-bits",
		"--max-kv-size=4096":        "mlx_lm.server: error: unrecognized arguments: --max-kv-size",
		"--sim-mlx-version 0.29":    "mlx_lm.server: error: argument --sim-mlx-version: unknown MLX version",
	} {
		cmd := exec.Command(bin, strings.Fields(args)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "usage: mlx_lm.server") || !strings.Contains(stderr.String(), want) {
			t.Errorf("%s: %v\n%s", args, err, stderr.String())
		}
	}
}

func TestExitAfter(t *testing.T) {
	p := start(t, "--sim-exit-after", "2")
	for i := 0; i < 2; i++ {
		if code, body, err := p.chat(t, hi); err != nil || code != 200 {
			t.Fatalf("request %d: %d %v %s", i, code, err, body)
		}
	}
	err := p.wait(t)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("want exit status 1, got %v", err)
	}
	log := p.stderr.String()
	if !strings.Contains(log, "Traceback (most recent call last):\n") || !strings.HasSuffix(log, "RuntimeError: can't start new thread\n") {
		t.Errorf("no Python traceback at the end:\n%s", log)
	}
}

// Before MLX 0.32 a Metal fault aborts the process.
func TestMetalFaultAborts(t *testing.T) {
	p := start(t, "--sim-metal-fault-after", "1", "--sim-mlx-version", "0.30")
	if code, _, err := p.chat(t, hi); err != nil || code != 200 {
		t.Fatalf("first request: %d %v", code, err)
	}
	err := p.wait(t)
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("want a signal death, got %v", err)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGABRT || !strings.HasPrefix(err.Error(), "signal: aborted") {
		t.Fatalf("want death by SIGABRT, got %v", err)
	}
	log := p.stderr.String()
	if !strings.Contains(log, "[METAL] Command buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout).\n") {
		t.Errorf("no [METAL] line:\n%s", log)
	}
	if strings.Contains(log, "goroutine ") || strings.Contains(log, "SIGABRT: abort") {
		t.Errorf("Go crash dump leaked into the log:\n%s", log)
	}
}

func TestHangAfter(t *testing.T) {
	p := start(t, "--sim-hang-after", "1")
	if code, _, err := p.chat(t, hi); err != nil || code != 200 {
		t.Fatalf("first request: %d %v", code, err)
	}
	// The hang starts once the first request's handling has begun: every
	// later completion waits with no header (shown on the engine these
	// flags make, in this process, where the wait is an event), while
	// /health and /v1/models answer as mlx_lm's HTTP threads do under a
	// wedged generation thread (mlx_lm v0.31.3 server.py:
	// ThreadingHTTPServer, do_GET answers without the generation thread).
	if !stuckInProcess(t, "--sim-hang-after", "1") {
		t.Error("a completion after the hang got an answer")
	}
	go func() { _, _, _ = p.chat(t, hi) }() // the binary's own hung request
	for _, path := range []string{"/health", "/v1/models"} {
		resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(p.base + path)
		if err != nil {
			t.Fatalf("%s after the hang: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s after the hang: %d", path, resp.StatusCode)
		}
	}
}

// While the model loads, /health and /v1/models answer (a load of an
// hour: had they waited for it, they would not answer at all); a
// completion waits for the load, so it is answered no sooner than the load
// takes from the start (a timer only fires late).
func TestLoadDelay(t *testing.T) {
	bin := binary(t)
	loading := startBin(t, bin, "--sim-load-delay", "1h") // returns once /health answers
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(loading.base + "/v1/models")
	if err != nil {
		t.Fatalf("/v1/models while loading: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/v1/models while loading: %d", resp.StatusCode)
	}
	const delay = 1500 * time.Millisecond
	began := time.Now()
	p := startBin(t, bin, "--sim-load-delay", delay.String())
	if code, _, err := p.chat(t, hi); err != nil || code != 200 {
		t.Fatalf("completion: %d %v", code, err)
	}
	if waited := time.Since(began); waited < delay {
		t.Errorf("completion answered %v after start; the model loads in %v", waited, delay)
	}
}

// Under MLX 0.32 (the default) a Metal fault kills the generation thread:
// the process lives, /health answers, completions wait.
func TestMetalFaultKillsTheThreadUnderMLX032(t *testing.T) {
	p := start(t, "--sim-metal-fault-after", "1")
	if code, _, err := p.chat(t, hi); err != nil || code != 200 {
		t.Fatalf("first request: %d %v", code, err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for !strings.Contains(p.stderr.String(), "RuntimeError: [METAL] Command buffer execution failed") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(p.stderr.String(), "Exception in thread Thread-1 (_generate):\n") {
		t.Fatalf("no thread death in the log:\n%s", p.stderr.String())
	}
	resp, err := (&http.Client{Timeout: time.Second}).Get(p.base + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/health after the thread died: %v", err)
	}
	resp.Body.Close()
	if !stuckInProcess(t, "--sim-metal-fault-after", "1") {
		t.Fatal("a dead thread answered")
	}
	select {
	case err := <-p.done:
		p.done <- err
		t.Fatalf("the process exited: %v", err)
	default:
	}
}

// A bind failure prints the traceback and never exits (the non-daemon
// generation thread keeps the interpreter waiting).
func TestBindFailureNeverExits(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	cmd := exec.Command(binary(t), "--port", port)
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Once the traceback is out, the process has nothing left to do but
	// wait: killed then, it dies of the signal. One that exits after the
	// traceback has an exit status instead.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "OSError: [Errno 48] Address already in use") {
		if time.Now().After(deadline) {
			t.Fatalf("no bind traceback:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	err = <-done
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() {
		t.Fatalf("exited on its own after the traceback: %v\n%s", err, stderr.String())
	}
}

// A Qwen3 model reasons unless something turns it off, as mlx_lm 0.31.2
// and later do for a vocabulary with <think> (mlx_lm v0.31.3
// tokenizer_utils.py, TokenizerWrapper.apply_chat_template): the answer's
// message carries "reasoning" first. --chat-template-args, or the flag set
// to false, turn it off; a model without the tokens never reasons.
func TestQwen3ThinksByDefault(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		think bool
	}{
		{"qwen3 default", []string{"--model", "mlx-community/Qwen3-4B-4bit"}, true},
		{"chat-template-args", []string{"--model", "mlx-community/Qwen3-4B-4bit", "--chat-template-args", `{"enable_thinking": false}`}, false},
		{"flag off", []string{"--model", "mlx-community/Qwen3-4B-4bit", "--sim-think-by-default=false"}, false},
		{"no think tokens", []string{"--model", "mlx-community/Llama-3.2-3B-Instruct-4bit"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := start(t, c.args...)
			code, body, err := p.chat(t, `{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 64}`)
			if err != nil || code != 200 {
				t.Fatalf("%d %v", code, err)
			}
			if got := strings.Contains(body, `"reasoning": "`); got != c.think {
				t.Errorf("reasoning in the answer: %v, want %v\n%s", got, c.think, body)
			}
		})
	}
}
