package supervisorreceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func fired(w *threadWatch) bool {
	select {
	case <-w.died:
		return true
	default:
		return false
	}
}

func TestThreadWatchSeesTheDeathLine(t *testing.T) {
	w := newThreadWatch()
	_, _ = w.Write([]byte("2026-12-06 01:00:00,000 - INFO - Prompt Cache: 0 sequences\nExcept"))
	assert.False(t, fired(w))
	_, _ = w.Write([]byte("ion in thread Thread-1 (_generate):\r\nTraceback (most recent call last):\n"))
	assert.True(t, fired(w), "a line split across writes, CRLF")

	w = newThreadWatch()
	_, _ = w.Write([]byte("JSONDecodeError: x - Raw body: Exception in thread Thread-1 (_generate):\n"))
	assert.False(t, fired(w), "only at the start of a line")
	_, _ = w.Write([]byte("Exception in thread Thread-3 (process_request_thread):\n"))
	assert.False(t, fired(w), "another thread")
}

func TestThreadDeathReason(t *testing.T) {
	old := "Traceback (most recent call last):\nBrokenPipeError: [Errno 32] Broken pipe\n"
	metal := "Exception in thread Thread-1 (_generate):\nTraceback (most recent call last):\n  File \"x\", line 853, in _generate\nRuntimeError: [METAL] Command buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout).\n"
	assert.Equal(t, ReasonMetalGPUError, classifyCrash(deathText([]byte(old+metal)), exitStatus{}))
	malloc := "Exception in thread Thread-1 (_generate):\nTraceback (most recent call last):\nRuntimeError: [metal::malloc] Attempting to allocate 40000000000 bytes which is greater than the maximum allowed buffer size of 28991029248 bytes.\n"
	assert.Equal(t, ReasonOOM, classifyCrash(deathText([]byte(metal+malloc)), exitStatus{}), "the last death counts")
	load := "Exception in thread Thread-1 (_generate):\nTraceback (most recent call last):\n  File \"/x/mlx_lm/server.py\", line 385, in load_default\nhuggingface_hub.errors.RepositoryNotFoundError: 401 Client Error.\n"
	assert.Equal(t, ReasonModelLoadFailed, classifyCrash(deathText([]byte(load)), exitStatus{}))
	stop := "Exception in thread Thread-1 (_generate):\nTraceback (most recent call last):\n  File \"x\", line 634, in _make_state_machine\nTypeError: unhashable type: 'list'\n"
	assert.Equal(t, ReasonPythonError, classifyCrash(deathText([]byte(stop)), exitStatus{}))
	assert.Equal(t, ReasonStartupTimeout, startupReason([]byte("Traceback (most recent call last):\nOSError: [Errno 48] Address already in use\n")))
	assert.Equal(t, ReasonModelLoadFailed, startupReason([]byte(load)))
}

// The main thread's death (main() raised: a failed bind) fires too;
// socketserver's per-request tracebacks do not.
func TestThreadWatchSeesTheMainThreadDie(t *testing.T) {
	w := newThreadWatch()
	_, _ = w.Write([]byte("----------------------------------------\nException occurred during processing of request from ('127.0.0.1', 5)\nTraceback (most recent call last):\n  File \"/x/socketserver.py\", line 697, in process_request_thread\n"))
	assert.False(t, fired(w))
	_, _ = w.Write([]byte("Traceback (most recent call last):\n  File \"/Users/mlx/.venv/bin/mlx_lm.server\", line 8, in <module>\n    sys.exit(main())\nOSError: [Errno 48] Address already in use\n"))
	assert.True(t, fired(w))
	assert.Equal(t, ReasonPythonError, classifyCrash(deathText([]byte("Traceback (most recent call last):\nOSError: [Errno 48] Address already in use\n")), exitStatus{}))
}
