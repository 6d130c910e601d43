package logclassifyprocessor

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
	"github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
)

// loadSchema reads metadata.yaml, the one schema of the keys the processor
// sets.
var loadSchema = sync.OnceValues(func() (*mdschema.Component, error) { return mdschema.Load("metadata.yaml") })

// engineKeys is metadata.yaml's table of the engine's records.
func engineKeys(t *testing.T) mdschema.RecordAttributes {
	t.Helper()
	c, err := loadSchema()
	require.NoError(t, err)
	table, ok := c.LogAttributes.Get("engine")
	require.True(t, ok, "metadata.yaml has log_attributes.engine")
	return table
}

// Every line shape mlx_lm v0.31.3's server writes (its logging lines,
// warnings, tracebacks, socketserver's error blocks), as the engine writes it
// (a traceback is one record: the file_log receiver joins its lines), and
// the attributes each record gets are as metadata.yaml says: every key in
// it with its type, every always key present.
func TestClassifyEveryLineShape(t *testing.T) {
	keys := engineKeys(t)
	cl := &classifier{cfg: createDefaultConfig().(*Config)}
	for _, tc := range []struct {
		name, line         string
		severity, category string
	}{
		// mlx_lm's logging format.
		{"startup", "2026-08-22 16:59:44,123 - INFO - Starting httpd at 127.0.0.1 on port 8081...", info, CategoryStartup},
		{"cache total", "2026-08-22 16:59:44,123 - INFO - Prompt Cache: 4 sequences, 0.03 GB", info, CategoryCache},
		{"cache assistant", "2026-08-22 16:59:44,123 - INFO - - assistant: 3 sequences, 0.02 GB", info, CategoryCache},
		{"cache user", "2026-08-22 16:59:44,123 - INFO - - user: 1 sequences, 0.01 GB", info, CategoryCache},
		{"cache system", "2026-08-22 16:59:44,123 - INFO - - system: 0 sequences, 0.00 GB", info, CategoryCache},
		{"cache before v0.31.2", "2026-08-22 16:59:44,123 - INFO - KV Caches: 2 seq, 0.05 GB, latest user cache 812 tokens", info, CategoryCache},
		{"prefill progress", "2026-08-22 16:59:44,123 - INFO - Prompt processing progress: 2048/8192", info, CategoryGeneration},
		{"tools unsupported", "2026-08-22 16:59:44,123 - WARNING - Received tools but model does not support tool calling. If you think this is an error, file an issue.", warning, CategoryGeneration},
		{"tool call parse", "2026-08-22 16:59:44,123 - WARNING - Failed to parse tool call (JSONDecodeError: Expecting value) — tool text was likely truncated mid-generation.", warning, CategoryGeneration},
		{"draft tokenizer", "2026-08-22 16:59:44,123 - WARNING - Draft model tokenizer does not match model tokenizer. Speculative decoding may not work as expected.", warning, CategoryStartup},
		{"json decode", "2026-08-22 16:59:44,123 - ERROR - JSONDecodeError: Expecting value: line 1 column 1 (char 0) - Raw body: {", errorS, CategoryError},
		{"invalid body", "2026-08-22 16:59:44,123 - ERROR - Invalid Request Body: temperature must be a float", errorS, CategoryError},
		{"debug request", `2026-08-22 16:59:44,123 - DEBUG - Incoming Request Body: {"model": "m"}`, debug, CategoryGeneration},
		{"debug stream", "2026-08-22 16:59:44,123 - DEBUG - Starting stream:", debug, CategoryGeneration},
		{"debug completion", "2026-08-22 16:59:44,123 - DEBUG - Starting completion:", debug, CategoryGeneration},
		{"debug response", `2026-08-22 16:59:44,123 - DEBUG - Outgoing Response: {"id": "chatcmpl-1"}`, debug, CategoryGeneration},
		{"unknown info", "2026-08-22 16:59:44,123 - INFO - Something new", info, CategoryOther},
		{"unknown warning", "2026-08-22 16:59:44,123 - WARNING - Something odd", warning, CategoryOther},
		{"unknown error", "2026-08-22 16:59:44,123 - ERROR - Something broke", errorS, CategoryError},
		{"critical", "2026-08-22 16:59:44,123 - CRITICAL - Out of everything", "fatal", CategoryError},
		{"level wins over the table", "2026-08-22 16:59:44,123 - INFO - [METAL] informational", info, CategoryGPU},
		{"no error word rule with a level", "2026-08-22 16:59:44,123 - INFO - retried after an error", info, CategoryOther},

		// Start-up lines without the format.
		{"production warning", "/opt/venv/lib/python3.12/site-packages/mlx_lm/server.py:1692: UserWarning: mlx_lm.server is not recommended for production as it only implements basic security checks.\n  warnings.warn(", warning, CategoryStartup},
		{"python -m deprecation", "Calling `python -m mlx_lm.server...` directly is deprecated. Use `mlx_lm.server...` or `python -m mlx_lm server ...` instead.", warning, CategoryStartup},
		{"other python warning", "/opt/venv/lib/python3.12/site-packages/transformers/utils.py:88: FutureWarning: something changes\n  warnings.warn(", warning, CategoryPython},

		// The access log, and http.server's own error lines.
		{"access 200", `127.0.0.1 - - [22/Aug/2026 16:59:44] "POST /v1/chat/completions HTTP/1.1" 200 -`, info, CategoryHTTP},
		{"access with a query", `127.0.0.1 - - [22/Aug/2026 16:59:44] "GET /v1/models?limit=1 HTTP/1.1" 200 -`, info, CategoryHTTP},
		{"access 404", `127.0.0.1 - - [22/Aug/2026 16:59:44] "GET /nope HTTP/1.1" 404 -`, warning, CategoryHTTP},
		{"access 500", `::1 - - [22/Aug/2026 16:59:44] "POST /v1/completions HTTP/1.1" 500 -`, errorS, CategoryHTTP},
		{"http error line", `127.0.0.1 - - [22/Aug/2026 16:59:44] code 400, message Bad request syntax ('garbage')`, warning, CategoryError},

		// The MLX runtime.
		{"metal bare", "[METAL] Command buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout).", errorS, CategoryGPU},
		{"metal libc++abi", "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory).", errorS, CategoryGPU},
		{"metal malloc", "[metal::malloc] Attempting to allocate 40000000000 bytes which is greater than the maximum allowed buffer size of 28991029248 bytes.", errorS, CategoryGPU},
		{"ring send recv", "[ring] Too many send/recv errors. Failing pending tasks...", errorS, CategoryRank},
		{"ring peer lost", "[ring] connection to a peer was lost", errorS, CategoryRank},
		{"launch exit", "\x1b[33m[WARN] Node with rank 1 exited with code 1 \x1b[0m", warning, CategoryRank},
		{"launch killed", "\x1b[33m[WARN] Node with rank 0 was killed \x1b[0m", warning, CategoryRank},

		// Python crashes, each one record.
		{"traceback", "Traceback (most recent call last):\n  File \"/x/server.py\", line 1200, in handle\n    self.validate()\nValueError: temperature must be at least 0", errorS, CategoryPython},
		{"socketserver block", "----------------------------------------\nException occurred during processing of request from ('127.0.0.1', 50122)\nTraceback (most recent call last):\n  File \"/usr/lib/python3.12/socketserver.py\", line 318, in _handle_request_noblock\n    self.process_request(request, client_address)\nAssertionError: Request did not contain messages\n----------------------------------------", errorS, CategoryPython},
		{"thread exception", "Exception in thread Thread-1 (_generate):\nTraceback (most recent call last):\n  File \"/x/server.py\", line 700, in _generate\nRuntimeError: boom", errorS, CategoryPython},
		{"traceback with metal", "Traceback (most recent call last):\n  File \"/x/generate.py\", line 40, in step\nRuntimeError: [METAL] Command buffer execution failed: Internal Error", errorS, CategoryGPU},
		{"fatal python", "Fatal Python error: Segmentation fault", errorS, CategoryPython},
		{"segfault", "Segmentation fault (core dumped)", errorS, CategoryPython},

		// Anything else.
		{"download progress", "Fetching 9 files: 100%|██████████| 9/9 [00:00<00:00, 20.1it/s]", info, CategoryOther},
		{"bare error word", "Error: could not load the model", errorS, CategoryError},
		{"bare failure", "Model load failed, retrying", errorS, CategoryError},
		{"no level, no rule", "hello", info, CategoryOther},
		{"almost a timestamp", "2026-08-22 16:59:44 - INFO - no milliseconds", info, CategoryOther},
		{"unknown level word", "2026-08-22 16:59:44,123 - NOTICE - hello", info, CategoryOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := classify(tc.line, time.UTC)
			assert.Equal(t, tc.severity, c.severity, "severity")
			assert.Equal(t, tc.category, c.category, "category")
			assert.Equal(t, severityNumbers[tc.severity], c.number, "severity number")
			lr := plog.NewLogRecord()
			lr.Body().SetStr(tc.line)
			cl.apply(lr, tc.line, c)
			assert.NoError(t, doccheck.CheckAttributes(keys, lr.Attributes()))
		})
	}
}

func TestLoggingLineTimestampAndLevel(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	c := classify("2026-08-22 16:59:44,123 - WARNING - Something odd", paris)
	assert.Equal(t, time.Date(2026, 8, 22, 14, 59, 44, 123e6, time.UTC), c.time.UTC(), "local time in the configured zone")
	assert.Equal(t, "WARNING", c.text, "the level as printed")
	assert.Equal(t, plog.SeverityNumberWarn, c.number)
}

func TestAccessLine(t *testing.T) {
	c := classify(`10.0.0.2 - - [22/Aug/2026 16:59:44] "POST /v1/chat/completions?x=1 HTTP/1.1" 503 -`, time.UTC)
	a := c.access
	if assert.NotNil(t, a) {
		assert.Equal(t, "10.0.0.2", a.client)
		assert.Equal(t, "POST", a.method)
		assert.Equal(t, "/v1/chat/completions?x=1", a.target)
		assert.Equal(t, 503, a.status)
		assert.Equal(t, time.Date(2026, 8, 22, 16, 59, 44, 0, time.UTC), c.time)
	}
	assert.Equal(t, "ERROR", c.text)
}

func TestBodyLosesColourCodes(t *testing.T) {
	c := classify("\x1b[33m[WARN] Node with rank 1 exited with code 1 \x1b[0m", time.UTC)
	assert.Equal(t, "[WARN] Node with rank 1 exited with code 1 ", c.body)
	assert.True(t, c.time.IsZero(), "the line carries no time")
}

func TestExceptionOfATraceback(t *testing.T) {
	for _, tc := range []struct{ body, typ, msg string }{
		{"Traceback (most recent call last):\n  File \"x.py\", line 1, in f\nValueError: temperature must be at least 0", "ValueError", "temperature must be at least 0"},
		{"----------------------------------------\nException occurred during processing of request from ('127.0.0.1', 1)\nTraceback (most recent call last):\n  File \"x.py\", line 1, in f\nAssertionError: Request did not contain messages\n----------------------------------------", "AssertionError", "Request did not contain messages"},
		{"Traceback (most recent call last):\n  File \"x.py\", line 1, in f\nKeyboardInterrupt", "KeyboardInterrupt", ""},
		{"Traceback (most recent call last):\n  File \"x.py\", line 1, in f\nValueError: a\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"x.py\", line 2, in g\nhuggingface_hub.errors.RepositoryNotFoundError: 404 Client Error.", "huggingface_hub.errors.RepositoryNotFoundError", "404 Client Error."},
	} {
		c := classify(tc.body, time.UTC)
		assert.Equal(t, tc.typ, c.excType)
		assert.Equal(t, tc.msg, c.excMsg)
	}
	assert.Empty(t, classify("[ring] connection to a peer was lost", time.UTC).excType, "no traceback, no exception")
}

func TestParseASCTimeRejectsNonsense(t *testing.T) {
	for _, s := range []string{"2026-13-22 16:59:44,123", "2026-08-22 25:59:44,123", "2026-08-2x 16:59:44,123", "2026/08/22 16:59:44,123"} {
		_, ok := parseASCTime(s, time.UTC)
		assert.False(t, ok, s)
	}
}

func TestEveryCategoryIsReachable(t *testing.T) {
	// A rule table that drifts from Categories fails here.
	seen := map[string]bool{CategoryHTTP: true, CategoryOther: true}
	for _, r := range rules {
		seen[r.category] = true
	}
	for _, c := range Categories {
		assert.True(t, seen[c], c)
	}
}

// The log-health sinks count records by the severity word this processor
// sets.
func TestSeverityKeyIsLogHealths(t *testing.T) {
	assert.Equal(t, loghealth.AttrSeverity, attrMlxLogSeverity)
}
