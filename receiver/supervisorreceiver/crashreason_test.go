package supervisorreceiver

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestClassifyCrash(t *testing.T) {
	tests := []struct {
		name string
		tail string
		st   exitStatus
		want string
	}{
		{
			name: "metal command buffer failure, then abort",
			tail: "2026-08-04 03:12:09,101 - INFO - Prompt processing progress: 2048/4096\n" +
				"libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout).\n",
			st:   exitStatus{Code: -6, Signal: syscall.SIGABRT},
			want: ReasonMetalGPUError,
		},
		{
			name: "metal failure before a python traceback",
			tail: "Traceback (most recent call last):\n  File \"server.py\", line 1, in <module>\nRuntimeError: [METAL] Command buffer execution failed: Internal Error (0000000e:Internal Error).\n",
			st:   exitStatus{Code: 1},
			want: ReasonMetalGPUError,
		},
		{
			name: "allocator out of memory",
			tail: "RuntimeError: [metal::malloc] Attempting to allocate 34359738368 bytes which is greater than the maximum allowed buffer size of 28991029248 bytes.\n",
			st:   exitStatus{Code: 1},
			want: ReasonOOM,
		},
		{
			name: "ring send/recv errors",
			tail: "[ring] Too many send/recv errors. Failing pending tasks...\n",
			st:   exitStatus{Code: 1},
			want: ReasonRingError,
		},
		{
			name: "mlx.launch says a rank died",
			tail: "\x1b[33m[WARN] Node with rank 1 exited with code 1 \x1b[0m\n",
			st:   exitStatus{Code: 1},
			want: ReasonRingError,
		},
		{
			name: "a model mlx_lm cannot load (mlx-lm 0.30 loads in the main thread, then exits 1)",
			tail: "Traceback (most recent call last):\n  File \"/opt/mlx/bin/mlx_lm.server\", line 8, in <module>\nValueError: Model type qwen9 not supported.\n",
			st:   exitStatus{Code: 1},
			want: ReasonModelLoadFailed,
		},
		{
			name: "python traceback",
			tail: "Traceback (most recent call last):\n  File \"/opt/mlx/bin/mlx_lm.server\", line 8, in <module>\nRuntimeError: can't start new thread\n",
			st:   exitStatus{Code: 1},
			want: ReasonPythonError,
		},
		{
			name: "killed by a signal with nothing said",
			tail: "2026-08-04 03:12:09,101 - INFO - Prompt Cache: 1 sequences, 0.01 GB\n",
			st:   exitStatus{Code: -9, Signal: syscall.SIGKILL},
			want: ReasonSignal,
		},
		{
			name: "plain exit",
			tail: "Starting httpd at 127.0.0.1 on port 8081...\n",
			st:   exitStatus{Code: 0},
			want: ReasonExit,
		},
		{name: "nothing printed", st: exitStatus{Code: 2}, want: ReasonExit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, classifyCrash([]byte(tc.tail), tc.st))
		})
	}
}

func TestBackoffSchedule(t *testing.T) {
	var got []time.Duration
	for n := 1; n <= 7; n++ {
		got = append(got, backoffFor(n, 3*time.Second, 30*time.Second))
	}
	assert.Equal(t, []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second, 24 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second}, got)
	assert.Equal(t, 2*time.Second, backoffFor(1, 5*time.Second, 2*time.Second), "max caps the first wait too")
	assert.Equal(t, 30*time.Second, backoffFor(1000, 3*time.Second, 30*time.Second), "no overflow on long crash loops")
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	var tb tailBuffer
	for i := 0; i < 3*tailSize/10; i++ {
		_, _ = tb.Write([]byte("0123456789"))
	}
	_, _ = tb.Write([]byte("[METAL] Command buffer execution failed"))
	b := tb.Bytes()
	assert.Len(t, b, tailSize)
	assert.Equal(t, ReasonMetalGPUError, classifyCrash(b, exitStatus{}))
	tb.Reset()
	assert.Empty(t, tb.Bytes())
}
