package logclassifyprocessor

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/split"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/encoding/unicode"
)

// shippedLineStartPattern reads the file_log receiver's multiline pattern
// from the shipped config, so this test checks what users run.
func shippedLineStartPattern(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../config/mlx.yaml")
	require.NoError(t, err)
	var cfg struct {
		Receivers map[string]struct {
			Multiline struct {
				LineStartPattern string `yaml:"line_start_pattern"`
			} `yaml:"multiline"`
		} `yaml:"receivers"`
	}
	require.NoError(t, yaml.Unmarshal(b, &cfg))
	p := cfg.Receivers["file_log/engine"].Multiline.LineStartPattern
	require.NotEmpty(t, p, "receivers.file_log/engine.multiline.line_start_pattern in config/mlx.yaml")
	return p
}

// splitRecords cuts a log the way the file_log receiver does with the
// pattern. The reader hands over one byte at a time, so the pattern is tried
// on every prefix of the log: a file read while it is being written, or a
// read buffer that ends anywhere.
func splitRecords(t *testing.T, pattern, log string) []string {
	t.Helper()
	f, err := split.Config{LineStartPattern: pattern}.Func(unicode.UTF8, true, 1<<20)
	require.NoError(t, err)
	sc := bufio.NewScanner(iotest.OneByteReader(strings.NewReader(log)))
	sc.Buffer(make([]byte, 0, 64), 1<<20)
	sc.Split(f)
	var out []string
	for sc.Scan() {
		out = append(out, strings.TrimRight(sc.Text(), "\n"))
	}
	require.NoError(t, sc.Err())
	return out
}

// engineLog has every line shape mlx_lm v0.31.3's server writes, in records.
var engineLog = [][]string{
	{"Calling `python -m mlx_lm.server...` directly is deprecated. Use `mlx_lm.server...` or `python -m mlx_lm server ...` instead."},
	{"/opt/venv/lib/python3.12/site-packages/mlx_lm/server.py:1692: UserWarning: mlx_lm.server is not recommended for production as it only implements basic security checks.",
		"  warnings.warn("},
	{"2026-08-22 16:59:44,123 - INFO - Starting httpd at 127.0.0.1 on port 8081..."},
	{"Fetching 9 files: 100%|██████████| 9/9 [00:00<00:00, 20.1it/s]"},
	// tqdm redraws a Hugging Face download bar with \r, the first draw
	// included (huggingface_hub's snapshot_download, called by mlx_lm
	// v0.31.3 utils.py _download): a line that begins with \r is a record of
	// its own, not the continuation of the line before.
	{"\rFetching 11 files:   0%|          | 0/11 [00:00<?, ?it/s]\rFetching 11 files:  55%|█████▍    | 6/11 [00:04<00:03,  1.45it/s]\rFetching 11 files: 100%|██████████| 11/11 [00:07<00:00,  1.51it/s]"},
	{"2026-08-22 16:59:45,001 - INFO - Prompt Cache: 4 sequences, 0.03 GB"},
	{"2026-08-22 16:59:45,001 - INFO - - assistant: 3 sequences, 0.02 GB"},
	{"2026-08-22 16:59:45,002 - INFO - Prompt processing progress: 2048/8192"},
	{`127.0.0.1 - - [22/Aug/2026 16:59:45] "POST /v1/chat/completions HTTP/1.1" 200 -`},
	{"----------------------------------------",
		"Exception occurred during processing of request from ('127.0.0.1', 50122)",
		"Traceback (most recent call last):",
		`  File "/usr/lib/python3.12/socketserver.py", line 318, in _handle_request_noblock`,
		"    self.process_request(request, client_address)",
		"    ~~~~~~~~~~~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^^^",
		"ValueError: temperature must be at least 0",
		"----------------------------------------"},
	{"2026-08-22 16:59:46,500 - WARNING - Received tools but model does not support tool calling."},
	{"Exception in thread Thread-1 (_generate):",
		"Traceback (most recent call last):",
		`  File "/x/server.py", line 700, in _generate`,
		"KeyboardInterrupt"},
	{"Traceback (most recent call last):",
		`  File "/x/hub.py", line 10, in get`,
		"requests.exceptions.HTTPError: 404 Client Error",
		"",
		"During handling of the above exception, another exception occurred:",
		"",
		"Traceback (most recent call last):",
		`  File "/x/server.py", line 20, in load`,
		"huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error."},
	{"Traceback (most recent call last):",
		`  File "/x/a.py", line 1, in f`,
		"OSError: x",
		"",
		"The above exception was the direct cause of the following exception:",
		"",
		"Traceback (most recent call last):",
		`  File "/x/b.py", line 2, in g`,
		"RuntimeError: y"},
	{"[METAL] Command buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)."},
	{"libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Internal Error"},
	{"[ring] Too many send/recv errors. Failing pending tasks..."},
	{"\x1b[33m[WARN] Node with rank 1 exited with code 1 \x1b[0m"},
	{"Fatal Python error: Aborted"},
	{"Segmentation fault (core dumped)"},
	{"2026-08-22 16:59:50,000 - INFO - Starting httpd at 127.0.0.1 on port 8081..."},
}

func TestShippedMultilinePatternMakesOneRecordPerEntry(t *testing.T) {
	pattern := shippedLineStartPattern(t)
	var log strings.Builder
	var want []string
	for _, rec := range engineLog {
		want = append(want, strings.Join(rec, "\n"))
		log.WriteString(strings.Join(rec, "\n") + "\n")
	}
	got := splitRecords(t, pattern, log.String())
	assert.Equal(t, want, got)
}

func TestEveryTracebackRecordIsClassifiedPython(t *testing.T) {
	pattern := shippedLineStartPattern(t)
	var log strings.Builder
	for _, rec := range engineLog {
		log.WriteString(strings.Join(rec, "\n") + "\n")
	}
	for _, rec := range splitRecords(t, pattern, log.String()) {
		if strings.Contains(rec, "Traceback") {
			c := classify(rec, time.UTC)
			assert.Equal(t, CategoryPython, c.category, rec)
			assert.NotEmpty(t, c.excType, rec)
		}
	}
}
